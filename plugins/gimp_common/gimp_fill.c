/* Opens the model in process and edits with the template cache, as the FlashPS filters do
 * (plugins/filters/support/filter_support.cpp): look up, capture on a miss, then edit. */
#include "gimp_fill.h"

static GThread                *progress_thread; /* GIMP's wire is not thread-safe: report from */
static FlashpsFillProgressFunc progress_func;   /* the fill's own thread only */
static gchar                  *progress_stage;

/* Passes the library's stages to the plug-in's progress bar. GIMP 2.10 cancels a plug-in by
 * ending its process (see plugins/gimp/README.md), so this never returns 0. */
static int
report_progress (const char *stage, int step, int total_steps, double stage_seconds, void *user_data)
{
  const gchar *changed = NULL;

  if (progress_func == NULL || g_thread_self () != progress_thread)
    return 1;
  if (g_strcmp0 (stage, progress_stage) != 0)
    {
      g_free (progress_stage);
      progress_stage = g_strdup (stage);
      changed = stage;
    }
  progress_func (changed, total_steps > 0 ? (gdouble) step / total_steps : -1.0);
  return 1;
}

static gboolean
failed (gchar **error, const gchar *what)
{
  *error = g_strdup_printf ("FlashPS Generative Fill: %s: %s", what, flashps_last_error ());
  return FALSE;
}

/* One editor per plug-in process (GIMP starts one per call); the store is the CLI's. */
static flashps_editor *
open_editor (gchar **error)
{
  flashps_runtime_options runtime = flashps_runtime_default_options ();
  flashps_editor_params params = flashps_editor_default_params ();
  flashps_editor *editor = NULL;

  runtime.keep_freed_memory = 1; /* our own process: LibTorch on CPUs runs faster so */
  if (flashps_init (&runtime) != FLASHPS_OK)
    {
      failed (error, "could not start");
      return NULL;
    }
  /* $FLASHPS_CACHE_DIR, else ~/.cache/flashps/store: `flashps cache list` shows our captures. */
  params.capture_dir = flashps_store_default_directory ();
  params.progress = report_progress;
  /* NULL: $FLASHPS_MODEL, else the bundled model. */
  if (flashps_editor_open (NULL, &params, &editor) != FLASHPS_OK)
    failed (error, "could not open the model");
  return editor;
}

gboolean
flashps_gimp_fill (const flashps_image *image, const flashps_image *mask,
                   const FlashpsFillSettings *settings, flashps_image *result,
                   FlashpsFillOutcome *outcome, gchar **error)
{
  flashps_edit_params params = flashps_edit_default_params ();
  flashps_edit_stats stats = { 0 };
  flashps_editor *editor;
  gboolean ok = TRUE;
  gint64 started;
  int found = 0;

  progress_thread = g_thread_self ();
  progress_func = settings->progress;
  editor = open_editor (error);
  if (editor == NULL)
    return FALSE;

  params.seed = settings->seed;
  params.steps = settings->steps;
  params.strength = settings->strength;
  params.prompt = settings->prompt;
  params.progress = report_progress;
  stats.struct_size = sizeof stats;

  started = g_get_monotonic_time ();
  /* Messages are read before flashps_editor_close, which may clear flashps_last_error. */
  if (flashps_template_lookup (editor, image, mask, &params, &found) != FLASHPS_OK)
    ok = failed (error, "template lookup failed");
  if (ok && ! found)
    {
      /* A capture that fails (read-only store, full disk) costs only the next fill's speed. */
      if (flashps_template_register_masked (editor, image, mask, &params, 1, 1, &stats) != FLASHPS_OK)
        outcome->note = g_strdup_printf ("template not captured: %s", flashps_last_error ());
      else if (stats.template_hash == NULL || *stats.template_hash == '\0')
        outcome->note = g_strdup_printf ("template not captured: %s", stats.notes ? stats.notes : "");
      else
        outcome->captured = TRUE;
    }
  if (ok && flashps_edit (editor, image, mask, &params, result, &stats) != FLASHPS_OK)
    ok = failed (error, "the edit failed");
  outcome->seconds = (g_get_monotonic_time () - started) / 1e6;
  /* The edit after a fresh capture replays it too: only a template found before counts as a hit. */
  outcome->cache_hit = ok && found && stats.cache_hit;
  flashps_editor_close (editor);
  return ok;
}

const gchar *
flashps_gimp_check_settings (gint steps, gdouble strength)
{
  if (steps < 0 || strength <= 0.0 || strength > 1.0)
    return "FlashPS Generative Fill: steps must be >= 0 and strength in (0, 1]";
  return NULL;
}

gint64
flashps_gimp_mask_coverage (const flashps_image *mask)
{
  const gsize size = (gsize) mask->width * mask->height * mask->channels;
  gint64 selected = 0;
  gsize i;

  for (i = 0; i < size; i++)
    selected += mask->pixels[i] != 0;
  return selected;
}

gchar *
flashps_gimp_outcome_text (const FlashpsFillOutcome *outcome)
{
  if (outcome->cache_hit)
    return g_strdup_printf ("FlashPS: cache hit · %.2f s", outcome->seconds);
  if (outcome->captured)
    return g_strdup_printf ("FlashPS: template captured · %.1f s", outcome->seconds);
  return g_strdup_printf ("FlashPS: done · %.1f s (%s)", outcome->seconds,
                          outcome->note ? outcome->note : "template not captured");
}

gchar *
flashps_gimp_layer_name (guint32 seed)
{
  return g_strdup_printf ("FlashPS fill (seed %u)", seed);
}
