/* Where every field of every struct of the FROZEN version-1 plugin header lies (offset, size),
 * then its constants. A test checks that the current header (abi_current_layout.c) agrees on each:
 * version-1 plugins keep working only if fields are appended, never moved, resized or renumbered.
 * Frozen with the header: never edit this list. Compile with tests/plugins/abi_v1 first on the
 * include path. */
#include <flashps/plugin.h>

#include <stddef.h>

/* Declared extern first so that the definitions are exported from C and C++ alike. */
extern const size_t flashps_frozen_v1_layout[];
extern const size_t flashps_frozen_v1_layout_count;

#define FIELD(type, field) offsetof(type, field), sizeof(((type*)0)->field)
const size_t flashps_frozen_v1_layout[] = {
    /* flashps_parameter_spec */
    FIELD(flashps_parameter_spec, struct_size),
    FIELD(flashps_parameter_spec, key),
    FIELD(flashps_parameter_spec, label),
    FIELD(flashps_parameter_spec, description),
    FIELD(flashps_parameter_spec, type),
    FIELD(flashps_parameter_spec, minimum),
    FIELD(flashps_parameter_spec, maximum),
    FIELD(flashps_parameter_spec, default_number),
    FIELD(flashps_parameter_spec, default_text),
    FIELD(flashps_parameter_spec, choices),
    /* flashps_image_suite */
    FIELD(flashps_image_suite, struct_size),
    FIELD(flashps_image_suite, source),
    FIELD(flashps_image_suite, selection),
    FIELD(flashps_image_suite, expand_canvas),
    FIELD(flashps_image_suite, new_result),
    /* flashps_progress_suite */
    FIELD(flashps_progress_suite, struct_size),
    FIELD(flashps_progress_suite, report),
    FIELD(flashps_progress_suite, aborted),
    /* flashps_log_suite */
    FIELD(flashps_log_suite, struct_size),
    FIELD(flashps_log_suite, message),
    FIELD(flashps_log_suite, set_error),
    FIELD(flashps_log_suite, note),
    /* flashps_parameter_suite */
    FIELD(flashps_parameter_suite, struct_size),
    FIELD(flashps_parameter_suite, get_int),
    FIELD(flashps_parameter_suite, get_float),
    FIELD(flashps_parameter_suite, get_bool),
    FIELD(flashps_parameter_suite, get_string),
    /* flashps_engine_suite */
    FIELD(flashps_engine_suite, struct_size),
    FIELD(flashps_engine_suite, editor),
    FIELD(flashps_engine_suite, edit_default_params),
    FIELD(flashps_engine_suite, editor_info),
    FIELD(flashps_engine_suite, template_lookup),
    FIELD(flashps_engine_suite, template_register_masked),
    FIELD(flashps_engine_suite, edit),
    FIELD(flashps_engine_suite, image_free),
    FIELD(flashps_engine_suite, last_error),
    FIELD(flashps_engine_suite, report_edit),
    /* flashps_memory_suite */
    FIELD(flashps_memory_suite, struct_size),
    FIELD(flashps_memory_suite, allocate),
    FIELD(flashps_memory_suite, release),
    /* flashps_host_suites */
    FIELD(flashps_host_suites, struct_size),
    FIELD(flashps_host_suites, image),
    FIELD(flashps_host_suites, progress),
    FIELD(flashps_host_suites, log),
    FIELD(flashps_host_suites, parameters),
    FIELD(flashps_host_suites, engine),
    FIELD(flashps_host_suites, memory),
    /* flashps_filter_record */
    FIELD(flashps_filter_record, struct_size),
    FIELD(flashps_filter_record, host_abi_version),
    FIELD(flashps_filter_record, instance),
    FIELD(flashps_filter_record, suites),
    FIELD(flashps_filter_record, host),
    /* flashps_plugin_descriptor */
    FIELD(flashps_plugin_descriptor, struct_size),
    FIELD(flashps_plugin_descriptor, abi_version),
    FIELD(flashps_plugin_descriptor, name),
    FIELD(flashps_plugin_descriptor, title),
    FIELD(flashps_plugin_descriptor, version),
    FIELD(flashps_plugin_descriptor, vendor),
    FIELD(flashps_plugin_descriptor, category),
    FIELD(flashps_plugin_descriptor, description),
    FIELD(flashps_plugin_descriptor, flags),
    FIELD(flashps_plugin_descriptor, parameters),
    FIELD(flashps_plugin_descriptor, parameter_count),
    FIELD(flashps_plugin_descriptor, main),
    /* constants: ABI version, selectors, results, parameter types, flags, log levels */
    FLASHPS_PLUGIN_ABI_VERSION, FLASHPS_SELECTOR_PREPARE, FLASHPS_SELECTOR_PARAMETERS, FLASHPS_SELECTOR_START,
    FLASHPS_SELECTOR_ADVANCE, FLASHPS_SELECTOR_FINISH, FLASHPS_PLUGIN_OK, FLASHPS_PLUGIN_DONE,
    FLASHPS_PLUGIN_CANCELLED, FLASHPS_PLUGIN_ERROR, FLASHPS_PARAMETER_INT, FLASHPS_PARAMETER_FLOAT,
    FLASHPS_PARAMETER_BOOL, FLASHPS_PARAMETER_STRING, FLASHPS_PARAMETER_CHOICE, FLASHPS_PLUGIN_NEEDS_MASK,
    FLASHPS_PLUGIN_NEEDS_MODEL, FLASHPS_PLUGIN_TAKES_TEXT, FLASHPS_PLUGIN_LOG_DEBUG, FLASHPS_PLUGIN_LOG_INFO,
    FLASHPS_PLUGIN_LOG_WARNING,
};
#undef FIELD

const size_t flashps_frozen_v1_layout_count = sizeof flashps_frozen_v1_layout / sizeof flashps_frozen_v1_layout[0];
