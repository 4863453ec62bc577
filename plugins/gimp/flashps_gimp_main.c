/* FlashPS Generative Fill for GIMP 2.10: regenerates the selection of an RGB layer into a new,
 * selection-masked layer, with FlashPS linked in process through its public C API. */
#include <string.h>

#include <libgimp/gimp.h>

#include "gimp_dialog.h"
#include "gimp_fill.h"
#include "gimp_pixels.h"

static void query (void);
static void run (const gchar *name, gint nparams, const GimpParam *param, gint *nreturn_vals,
                 GimpParam **return_vals);

const GimpPlugInInfo PLUG_IN_INFO = { NULL, NULL, query, run };

MAIN ()

static void
query (void)
{
  static const GimpParamDef args[] = {
    { GIMP_PDB_INT32, "run-mode", "The run mode { RUN-INTERACTIVE (0), RUN-NONINTERACTIVE (1) }" },
    { GIMP_PDB_IMAGE, "image", "Input image (its selection is the region to fill)" },
    { GIMP_PDB_DRAWABLE, "drawable", "The layer to fill (a FlashPS fill layer: its source)" },
    { GIMP_PDB_STRING, "prompt", "What to paint (models that take text)" },
    { GIMP_PDB_INT32, "seed", "Random seed: the same values replay the same fill" },
    { GIMP_PDB_INT32, "steps", "Denoising steps, 0 = the model's default" },
    { GIMP_PDB_FLOAT, "strength", "How much to regenerate (0 < strength <= 1; 0 = 1.0)" },
  };
  static const GimpParamDef return_values[] = {
    { GIMP_PDB_INT32, "cache-hit", "1 if the template was in the FlashPS store already, else 0" },
    { GIMP_PDB_FLOAT, "seconds", "Seconds the fill took (not counting the model's loading)" },
  };

  gimp_install_procedure (FLASHPS_GIMP_PROCEDURE,
                          "Regenerate the selection with FlashPS",
                          "Fills the selection of the layer with a generative edit, as a new layer "
                          "above it masked by the selection. The first fill of a layer captures it "
                          "in the FlashPS activation store (shared with the flashps CLI); later "
                          "fills of it replay the capture and compute only the masked region.",
                          "FlashPS", "FlashPS", "2024",
                          "Generative _Fill…", "RGB*", GIMP_PLUGIN,
                          G_N_ELEMENTS (args), G_N_ELEMENTS (return_values), args, return_values);
  gimp_plugin_menu_register (FLASHPS_GIMP_PROCEDURE, "<Image>/Filters/FlashPS");
}

/* Ends the call with an error: GIMP shows the message (and Script-Fu reports it). */
static void
fail (GimpParam *values, gint *nreturn_vals, GimpPDBStatusType status, gchar *message)
{
  static gchar *kept; /* must outlive run(): libgimp sends the values after it returns */

  g_free (kept);
  kept = message;
  values[0].data.d_status = status;
  values[1].type = GIMP_PDB_STRING;
  values[1].data.d_string = kept;
  *nreturn_vals = 2;
}

/* Reads the parameters of the call into `values`; FALSE: the user cancelled. */
static gboolean
read_values (GimpRunMode run_mode, const GimpParam *param, FlashpsGimpValues *values)
{
  switch (run_mode)
    {
    case GIMP_RUN_INTERACTIVE:
      gimp_get_data (FLASHPS_GIMP_PROCEDURE, values);
      if (! flashps_gimp_dialog (values))
        return FALSE;
      break;
    case GIMP_RUN_WITH_LAST_VALS:
      gimp_get_data (FLASHPS_GIMP_PROCEDURE, values);
      break;
    default:
      g_strlcpy (values->prompt, param[3].data.d_string ? param[3].data.d_string : "",
                 sizeof values->prompt);
      values->seed = param[4].data.d_int32;
      values->randomize = FALSE;
      values->steps = param[5].data.d_int32;
      values->strength = param[6].data.d_float == 0.0 ? 1.0 : param[6].data.d_float;
    }
  if (values->randomize)
    values->seed = g_random_int_range (0, G_MAXINT32);
  return TRUE;
}

/* Checks that the call can run; NULL, or the message to fail with. */
static gchar *
check_input (gint32 image, gint32 drawable)
{
  if (gimp_image_base_type (image) != GIMP_RGB)
    return g_strdup ("FlashPS Generative Fill works on RGB images: convert this one first "
                     "(Image ▸ Mode ▸ RGB)");
  if (! gimp_item_is_layer (drawable))
    return g_strdup ("FlashPS Generative Fill: choose a layer to fill (not a mask or channel)");
  if (gimp_selection_is_empty (image))
    return g_strdup ("FlashPS Generative Fill: select the region to fill first");
  return NULL;
}

/* GIMP 2.10's progress bar, for the shared fill (plugins/gimp_common). */
static void
show_progress (const gchar *stage, gdouble fraction)
{
  if (stage != NULL)
    gimp_progress_set_text_printf ("FlashPS: %s", stage);
  if (fraction >= 0.0)
    gimp_progress_update (fraction);
  else
    gimp_progress_pulse ();
}

/* Reads the layer and selection, runs the edit and adds the fill layer; NULL, or an error. */
static gchar *
fill_selection (gint32 image, gint32 drawable, const FlashpsGimpValues *settings,
                FlashpsFillOutcome *outcome)
{
  /* A fill layer's own pixels are a result: fill its source again (the cached template). */
  const gint32 source = flashps_gimp_fill_source (image, drawable);
  flashps_image pixels = { 0 }, mask = { 0 }, result = { 0 };
  FlashpsFillSettings fill = { settings->prompt, (guint32) settings->seed, settings->steps,
                               (gfloat) settings->strength, show_progress };
  gchar *error = NULL, *layer_name;
  gint32 layer = -1;

  if (flashps_gimp_read_selection (image, source, &mask) == 0)
    error = g_strdup ("FlashPS Generative Fill: select the region to fill first "
                      "(the selection does not cover this layer)");
  else if (! flashps_gimp_read_layer (source, &pixels))
    error = g_strdup_printf ("FlashPS Generative Fill: %s", flashps_last_error ());
  else
    {
      gimp_progress_init ("FlashPS Generative Fill");
      flashps_gimp_fill (&pixels, &mask, &fill, &result, outcome, &error);
    }
  flashps_image_free (&pixels);
  flashps_image_free (&mask);
  if (error != NULL)
    return error;

  layer_name = flashps_gimp_layer_name ((guint32) settings->seed); /* as run */
  gimp_image_undo_group_start (image);
  if (result.width == (guint32) gimp_drawable_width (source) &&
      result.height == (guint32) gimp_drawable_height (source))
    layer = flashps_gimp_add_fill_layer (image, drawable, source, &result, layer_name);
  gimp_image_undo_group_end (image);
  g_free (layer_name);
  flashps_image_free (&result);
  gimp_progress_end ();
  return layer < 0 ? g_strdup ("FlashPS Generative Fill: could not add the result layer") : NULL;
}

static void
report (const FlashpsFillOutcome *outcome)
{
  gchar *text = flashps_gimp_outcome_text (outcome);

  gimp_message (text);
  g_free (text);
}

static void
run (const gchar *name, gint nparams, const GimpParam *param, gint *nreturn_vals,
     GimpParam **return_vals)
{
  static GimpParam values[3];
  const GimpRunMode run_mode = param[0].data.d_int32;
  const gint32 image = param[1].data.d_image;
  const gint32 drawable = param[2].data.d_drawable;
  FlashpsGimpValues settings = { "", 0, FALSE, 0, 1.0 };
  FlashpsFillOutcome outcome = { 0 };
  const gchar *refused;
  gchar *error = NULL;

  *nreturn_vals = 1;
  *return_vals = values;
  values[0].type = GIMP_PDB_STATUS;
  values[0].data.d_status = GIMP_PDB_SUCCESS;
  gegl_init (NULL, NULL);

  if (run_mode == GIMP_RUN_NONINTERACTIVE && nparams != 7)
    {
      fail (values, nreturn_vals, GIMP_PDB_CALLING_ERROR,
            g_strdup ("FlashPS Generative Fill takes 7 parameters"));
      return;
    }
  /* Checked before the dialog: no point in asking for a prompt that cannot be used. */
  if ((error = check_input (image, drawable)) != NULL)
    {
      fail (values, nreturn_vals, GIMP_PDB_EXECUTION_ERROR, error);
      return;
    }
  if (! read_values (run_mode, param, &settings))
    {
      values[0].data.d_status = GIMP_PDB_CANCEL;
      return;
    }
  if ((refused = flashps_gimp_check_settings (settings.steps, settings.strength)) != NULL)
    error = g_strdup (refused);
  else
    error = fill_selection (image, drawable, &settings, &outcome);
  if (error != NULL)
    {
      g_free (outcome.note);
      fail (values, nreturn_vals, GIMP_PDB_EXECUTION_ERROR, error);
      return;
    }

  if (run_mode != GIMP_RUN_NONINTERACTIVE)
    {
      gimp_displays_flush ();
      gimp_set_data (FLASHPS_GIMP_PROCEDURE, &settings, sizeof settings);
      report (&outcome);
    }
  g_free (outcome.note);
  *nreturn_vals = 3;
  values[1].type = GIMP_PDB_INT32;
  values[1].data.d_int32 = outcome.cache_hit ? 1 : 0;
  values[2].type = GIMP_PDB_FLOAT;
  values[2].data.d_float = outcome.seconds;
}
