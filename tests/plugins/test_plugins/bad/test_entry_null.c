/* Refused: the entry point returns NULL (it will not work with this host). */
#include <flashps/plugin.h>

FLASHPS_PLUGIN_EXPORT const flashps_plugin_descriptor* flashps_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return NULL;
}
