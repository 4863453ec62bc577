#include <stdio.h>
#include <flashps/flashps.h>
int main(int argc, char** argv) {
  flashps_editor* editor = NULL;
  flashps_editor_params params = flashps_editor_default_params();
  if (flashps_editor_open(argc > 1 ? argv[1] : "/nonexistent", &params, &editor) != FLASHPS_OK) {
    printf("error: %s\n", flashps_last_error());
    return 0;
  }
  printf("opened\n");
  flashps_editor_close(editor);
  return 0;
}
