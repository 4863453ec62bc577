/* A small GTK2 dialog: prompt, seed, steps and strength. */
#include "gimp_dialog.h"

#include <libgimp/gimp.h>
#include <libgimp/gimpui.h>

/* A labelled row; `target` is what the label's mnemonic focuses. */
static void
add_row (GtkTable *table, gint row, const gchar *label, GtkWidget *widget, GtkWidget *target)
{
  GtkWidget *text = gtk_label_new_with_mnemonic (label);

  gtk_misc_set_alignment (GTK_MISC (text), 0.0, 0.5);
  gtk_label_set_mnemonic_widget (GTK_LABEL (text), target);
  gtk_table_attach (table, text, 0, 1, row, row + 1, GTK_FILL, GTK_FILL, 0, 0);
  gtk_table_attach (table, widget, 1, 3, row, row + 1, GTK_EXPAND | GTK_FILL, GTK_FILL, 0, 0);
}

gboolean
flashps_gimp_dialog (FlashpsGimpValues *values)
{
  GtkWidget *dialog, *table, *prompt, *seed, *steps, *steps_box;
  GtkObject *steps_adjustment, *strength;
  guint seed_value = (guint) values->seed;
  gboolean run;

  gimp_ui_init (FLASHPS_GIMP_BINARY, FALSE);
  dialog = gimp_dialog_new ("FlashPS Generative Fill", FLASHPS_GIMP_BINARY, NULL, 0,
                            NULL, NULL, /* no help pages: no Help button */
                            "_Cancel", GTK_RESPONSE_CANCEL,
                            "_OK", GTK_RESPONSE_OK,
                            NULL);
  gtk_dialog_set_alternative_button_order (GTK_DIALOG (dialog), GTK_RESPONSE_OK,
                                           GTK_RESPONSE_CANCEL, -1);
  gtk_dialog_set_default_response (GTK_DIALOG (dialog), GTK_RESPONSE_OK);
  gimp_window_set_transient (GTK_WINDOW (dialog));

  table = gtk_table_new (4, 3, FALSE);
  gtk_table_set_col_spacings (GTK_TABLE (table), 6);
  gtk_table_set_row_spacings (GTK_TABLE (table), 6);
  gtk_container_set_border_width (GTK_CONTAINER (table), 12);
  gtk_box_pack_start (GTK_BOX (gtk_dialog_get_content_area (GTK_DIALOG (dialog))), table,
                      TRUE, TRUE, 0);

  prompt = gtk_entry_new ();
  gtk_entry_set_max_length (GTK_ENTRY (prompt), sizeof values->prompt - 1);
  gtk_entry_set_text (GTK_ENTRY (prompt), values->prompt);
  gtk_entry_set_activates_default (GTK_ENTRY (prompt), TRUE);
  gtk_widget_set_tooltip_text (prompt, "What to paint into the selection (the bundled model "
                                       "ignores prompts)");
  add_row (GTK_TABLE (table), 0, "_Prompt:", prompt, prompt);

  /* The same seed, steps and strength replay the same fill; "New Seed" gives a variation. */
  seed = gimp_random_seed_new (&seed_value, &values->randomize);
  add_row (GTK_TABLE (table), 1, "_Seed:", seed, GIMP_RANDOM_SEED_SPINBUTTON (seed));

  steps = gimp_spin_button_new (&steps_adjustment, values->steps, 0, 200, 1, 10, 0, 1, 0);
  gtk_widget_set_tooltip_text (steps, "Denoising steps; 0: the model's default");
  steps_box = gtk_hbox_new (FALSE, 0); /* a short number: keep the spin button narrow */
  gtk_box_pack_start (GTK_BOX (steps_box), steps, FALSE, FALSE, 0);
  add_row (GTK_TABLE (table), 2, "S_teps:", steps_box, steps);

  strength = gimp_scale_entry_new (GTK_TABLE (table), 0, 3, "St_rength:", 160, 6,
                                   values->strength, 0.05, 1.0, 0.05, 0.1, 2,
                                   TRUE, 0, 0, "How much of the selection is regenerated", NULL);

  gtk_widget_show_all (dialog);
  run = gimp_dialog_run (GIMP_DIALOG (dialog)) == GTK_RESPONSE_OK;
  if (run)
    {
      g_strlcpy (values->prompt, gtk_entry_get_text (GTK_ENTRY (prompt)), sizeof values->prompt);
      values->seed = (gint32) seed_value;
      values->steps = gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (steps));
      values->strength = gtk_adjustment_get_value (GTK_ADJUSTMENT (strength));
    }
  gtk_widget_destroy (dialog);
  return run;
}
