/* The dialog is GIMP 3's GimpProcedureDialog over the procedure's arguments (GTK 3): the same
 * fields as the GIMP 2.10 dialog (plugins/gimp/gimp_dialog.c), with GIMP's own widgets. */
#include "gimp3_dialog.h"

#include <libgimp/gimpui.h>

gboolean
flashps_gimp3_dialog (GimpProcedure *procedure, GimpProcedureConfig *config)
{
  GtkWidget *dialog, *prompt;
  gboolean run;

  gimp_ui_init (FLASHPS_GIMP3_BINARY);
  dialog = gimp_procedure_dialog_new (procedure, config, "FlashPS Generative Fill");
  prompt = gimp_procedure_dialog_get_widget (GIMP_PROCEDURE_DIALOG (dialog), "prompt", G_TYPE_NONE);
  if (GTK_IS_ENTRY (prompt))
    gtk_entry_set_activates_default (GTK_ENTRY (prompt), TRUE);
  /* Steps is a short count: a spin button; strength a slider, as in the GIMP 2.10 dialog. */
  gimp_procedure_dialog_get_widget (GIMP_PROCEDURE_DIALOG (dialog), "steps", GIMP_TYPE_LABEL_SPIN);
  gimp_procedure_dialog_get_widget (GIMP_PROCEDURE_DIALOG (dialog), "strength", GIMP_TYPE_SCALE_ENTRY);
  gimp_procedure_dialog_fill (GIMP_PROCEDURE_DIALOG (dialog),
                              "prompt", "seed", "randomize", "steps", "strength", NULL);
  run = gimp_procedure_dialog_run (GIMP_PROCEDURE_DIALOG (dialog));
  gtk_widget_destroy (dialog);
  return run;
}
