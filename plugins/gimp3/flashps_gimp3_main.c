/* FlashPS Generative Fill for GIMP 3: regenerates the selection of an RGB layer into a new,
 * selection-masked layer, with FlashPS linked in process through its public C API. A GimpPlugIn
 * subclass registering one GimpImageProcedure; the fill itself is shared with the GIMP 2.10
 * plug-in (plugins/gimp_common). */
#include <libgimp/gimp.h>

#include "gimp3_dialog.h"
#include "gimp3_pixels.h"
#include "gimp_fill.h"

typedef struct
{
  GimpPlugIn parent_instance;
} FlashpsGimp3;

typedef struct
{
  GimpPlugInClass parent_class;
} FlashpsGimp3Class;

#define FLASHPS_GIMP3_TYPE (flashps_gimp3_get_type ())
GType flashps_gimp3_get_type (void) G_GNUC_CONST;
G_DEFINE_TYPE (FlashpsGimp3, flashps_gimp3, GIMP_TYPE_PLUG_IN)

GIMP_MAIN (FLASHPS_GIMP3_TYPE)

static GimpValueArray *run (GimpProcedure *procedure, GimpRunMode run_mode, GimpImage *image,
                            GimpDrawable **drawables, GimpProcedureConfig *config, gpointer run_data);

static GList *
query_procedures (GimpPlugIn *plug_in)
{
  return g_list_append (NULL, g_strdup (FLASHPS_GIMP_PROCEDURE));
}

/* The same procedure as the GIMP 2.10 plug-in's: name, arguments and return values. */
static GimpProcedure *
create_procedure (GimpPlugIn *plug_in, const gchar *name)
{
  GimpProcedure *procedure;

  if (g_strcmp0 (name, FLASHPS_GIMP_PROCEDURE) != 0)
    return NULL;
  procedure = gimp_image_procedure_new (plug_in, name, GIMP_PDB_PROC_TYPE_PLUGIN, run, NULL, NULL);
  gimp_procedure_set_image_types (procedure, "RGB*");
  gimp_procedure_set_sensitivity_mask (procedure, GIMP_PROCEDURE_SENSITIVE_DRAWABLE);
  gimp_procedure_set_menu_label (procedure, "Generative _Fill…");
  gimp_procedure_add_menu_path (procedure, "<Image>/Filters/FlashPS");
  gimp_procedure_set_documentation (procedure, "Regenerate the selection with FlashPS",
                                    "Fills the selection of the layer with a generative edit, as a "
                                    "new layer above it masked by the selection. The first fill of "
                                    "a layer captures it in the FlashPS activation store (shared "
                                    "with the flashps CLI); later fills of it replay the capture "
                                    "and compute only the masked region.",
                                    name);
  gimp_procedure_set_attribution (procedure, "FlashPS", "FlashPS", "2026");

  /* Mnemonics: the dialog's own buttons hold r (Reset), s (Save Defaults), c and o. */
  gimp_procedure_add_string_argument (procedure, "prompt", "_Prompt",
                                      "What to paint into the selection (models that take text; "
                                      "the bundled model ignores prompts)", "", G_PARAM_READWRITE);
  gimp_procedure_add_int_argument (procedure, "seed", "S_eed",
                                   "Random seed: the same values replay the same fill",
                                   0, G_MAXINT32, 0, G_PARAM_READWRITE);
  /* Not a PDB argument: scripts give their seed; the dialog may draw a new one each run. */
  gimp_procedure_add_boolean_aux_argument (procedure, "randomize", "_New seed on every run",
                                           "Draw a new seed each time (a new variation)",
                                           FALSE, G_PARAM_READWRITE);
  gimp_procedure_add_int_argument (procedure, "steps", "S_teps",
                                   "Denoising steps, 0 = the model's default",
                                   0, 200, 0, G_PARAM_READWRITE);
  gimp_procedure_add_double_argument (procedure, "strength", "Stren_gth",
                                      "How much of the selection is regenerated (0 < strength "
                                      "<= 1; 0 = 1.0)", 0.0, 1.0, 1.0, G_PARAM_READWRITE);

  gimp_procedure_add_int_return_value (procedure, "cache-hit", "Cache hit",
                                       "1 if the template was in the FlashPS store already, else 0",
                                       0, 1, 0, G_PARAM_READWRITE);
  gimp_procedure_add_double_return_value (procedure, "seconds", "Seconds",
                                          "Seconds the fill took (not counting the model's loading)",
                                          0.0, G_MAXDOUBLE, 0.0, G_PARAM_READWRITE);
  return procedure;
}

/* The plug-in has no translations: without this GIMP looks for a catalog and logs its absence
 * on every call. */
static gboolean
set_i18n (GimpPlugIn *plug_in, const gchar *procedure_name, gchar **gettext_domain,
          gchar **catalog_dir)
{
  return FALSE;
}

static void
flashps_gimp3_class_init (FlashpsGimp3Class *klass)
{
  GimpPlugInClass *plug_in_class = GIMP_PLUG_IN_CLASS (klass);

  plug_in_class->query_procedures = query_procedures;
  plug_in_class->create_procedure = create_procedure;
  plug_in_class->set_i18n = set_i18n;
}

static void
flashps_gimp3_init (FlashpsGimp3 *plug_in)
{
}

/* Ends the call with an error: GIMP shows the message (and a batch script reports it). */
static GimpValueArray *
fail (GimpProcedure *procedure, GimpPDBStatusType status, gchar *message)
{
  GError *error = g_error_new_literal (GIMP_PLUG_IN_ERROR, 0, message);

  g_free (message);
  return gimp_procedure_new_return_values (procedure, status, error);
}

/* Checks that the call can run; NULL, or the message to fail with. */
static gchar *
check_input (GimpImage *image, GimpDrawable **drawables)
{
  if (drawables == NULL || drawables[0] == NULL || drawables[1] != NULL)
    return g_strdup ("FlashPS Generative Fill: choose one layer to fill");
  if (gimp_image_get_base_type (image) != GIMP_RGB)
    return g_strdup ("FlashPS Generative Fill works on RGB images: convert this one first "
                     "(Image ▸ Mode ▸ RGB)");
  if (! GIMP_IS_LAYER (drawables[0])) /* a layer mask is a channel */
    return g_strdup ("FlashPS Generative Fill: choose a layer to fill (not a mask or channel)");
  if (gimp_selection_is_empty (image))
    return g_strdup ("FlashPS Generative Fill: select the region to fill first");
  return NULL;
}

/* GIMP 3's progress bar, for the shared fill. */
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
fill_selection (GimpImage *image, GimpLayer *layer, const FlashpsFillSettings *fill,
                FlashpsFillOutcome *outcome)
{
  /* A fill layer's own pixels are a result: fill its source again (the cached template). */
  GimpLayer *source = flashps_gimp3_fill_source (image, layer);
  flashps_image pixels = { 0 }, mask = { 0 }, result = { 0 };
  gchar *error = NULL, *layer_name;
  GimpLayer *added = NULL;

  if (flashps_gimp3_read_selection (image, GIMP_DRAWABLE (source), &mask) == 0)
    error = g_strdup ("FlashPS Generative Fill: select the region to fill first "
                      "(the selection does not cover this layer)");
  else if (! flashps_gimp3_read_layer (GIMP_DRAWABLE (source), &pixels))
    error = g_strdup_printf ("FlashPS Generative Fill: %s", flashps_last_error ());
  else
    {
      gimp_progress_init ("FlashPS Generative Fill");
      flashps_gimp_fill (&pixels, &mask, fill, &result, outcome, &error);
    }
  flashps_image_free (&pixels);
  flashps_image_free (&mask);
  if (error != NULL)
    return error;

  layer_name = flashps_gimp_layer_name ((guint32) fill->seed); /* as run */
  gimp_image_undo_group_start (image);
  if (result.width == (guint32) gimp_drawable_get_width (GIMP_DRAWABLE (source)) &&
      result.height == (guint32) gimp_drawable_get_height (GIMP_DRAWABLE (source)))
    added = flashps_gimp3_add_fill_layer (image, layer, source, &result, layer_name);
  gimp_image_undo_group_end (image);
  g_free (layer_name);
  flashps_image_free (&result);
  gimp_progress_end ();
  if (added == NULL)
    return g_strdup ("FlashPS Generative Fill: could not add the result layer");
  /* The fill is what the user sees next (and what a script reads as the selected layer). */
  gimp_image_set_selected_layers (image, (const GimpLayer *[]) { added, NULL });
  return NULL;
}

static GimpValueArray *
run (GimpProcedure *procedure, GimpRunMode run_mode, GimpImage *image, GimpDrawable **drawables,
     GimpProcedureConfig *config, gpointer run_data)
{
  FlashpsFillOutcome outcome = { 0 };
  FlashpsFillSettings fill = { 0 };
  GimpValueArray *values;
  gboolean randomize = FALSE;
  gchar *prompt = NULL, *error;
  const gchar *refused;
  gint seed = 0, steps = 0;
  gdouble strength = 1.0;

  /* Checked before the dialog: no point in asking for a prompt that cannot be used. */
  if ((error = check_input (image, drawables)) != NULL)
    return fail (procedure, GIMP_PDB_EXECUTION_ERROR, error);
  if (run_mode == GIMP_RUN_INTERACTIVE && ! flashps_gimp3_dialog (procedure, config))
    return gimp_procedure_new_return_values (procedure, GIMP_PDB_CANCEL, NULL);

  g_object_get (config, "prompt", &prompt, "seed", &seed, "randomize", &randomize,
                "steps", &steps, "strength", &strength, NULL);
  if (randomize && run_mode != GIMP_RUN_NONINTERACTIVE)
    {
      seed = g_random_int_range (0, G_MAXINT32);
      g_object_set (config, "seed", seed, NULL); /* the dialog shows the seed last used */
    }
  if (strength == 0.0)
    strength = 1.0; /* as in GIMP 2.10's procedure */
  fill = (FlashpsFillSettings) { prompt ? prompt : "", (guint32) seed, steps, (gfloat) strength,
                                 show_progress };
  if ((refused = flashps_gimp_check_settings (steps, strength)) != NULL)
    error = g_strdup (refused);
  else
    error = fill_selection (image, GIMP_LAYER (drawables[0]), &fill, &outcome);
  g_free (prompt);
  if (error != NULL)
    {
      g_free (outcome.note);
      return fail (procedure, GIMP_PDB_EXECUTION_ERROR, error);
    }

  if (run_mode != GIMP_RUN_NONINTERACTIVE)
    {
      gchar *text = flashps_gimp_outcome_text (&outcome);

      gimp_displays_flush ();
      gimp_message (text);
      g_free (text);
    }
  g_free (outcome.note);
  values = gimp_procedure_new_return_values (procedure, GIMP_PDB_SUCCESS, NULL);
  GIMP_VALUES_SET_INT (values, 1, outcome.cache_hit ? 1 : 0);
  GIMP_VALUES_SET_DOUBLE (values, 2, outcome.seconds);
  return values;
}
