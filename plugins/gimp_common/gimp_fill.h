/* The FlashPS edit behind Generative Fill, through the public C API and the shared template cache.
 * GIMP-independent: the GIMP 2.10 (plugins/gimp) and GIMP 3 (plugins/gimp3) plug-ins both link it
 * and pass their own libgimp's progress calls. */
#ifndef FLASHPS_GIMP_FILL_H
#define FLASHPS_GIMP_FILL_H

#include <glib.h>

#include <flashps/flashps.h>

/* The PDB name both plug-ins register: a script calls the fill alike in GIMP 2.10 and 3. */
#define FLASHPS_GIMP_PROCEDURE "plug-in-flashps-generative-fill"

/* Shows a stage of the fill: `stage` changed (or NULL: same as before), `fraction` in [0, 1] or
 * negative when the stage has no count (a pulse). Called only from the thread that runs the fill. */
typedef void (*FlashpsFillProgressFunc) (const gchar *stage, gdouble fraction);

typedef struct
{
  const gchar *prompt;
  guint64      seed;
  gint         steps;    /* 0: the model's default */
  gfloat       strength; /* (0, 1] */
  FlashpsFillProgressFunc progress; /* or NULL */
} FlashpsFillSettings;

typedef struct
{
  gboolean cache_hit;     /* the template was in the store before this fill */
  gboolean captured;      /* this fill captured it (a miss on a writable store) */
  gdouble  seconds;       /* lookup, capture and edit; not the model's loading */
  gchar   *note;          /* why nothing was captured, or NULL; g_free it */
} FlashpsFillOutcome;

/* NULL when steps and strength can run, else the message to fail with (static). */
const gchar *flashps_gimp_check_settings (gint steps, gdouble strength);

/* The number of pixels a mask selects (non-zero). */
gint64 flashps_gimp_mask_coverage (const flashps_image *mask);

/* Regenerates the masked part of `image` into `result` (free with flashps_image_free). On
 * failure returns FALSE and sets *error to a message to show (g_free it). */
gboolean flashps_gimp_fill (const flashps_image *image, const flashps_image *mask,
                            const FlashpsFillSettings *settings, flashps_image *result,
                            FlashpsFillOutcome *outcome, gchar **error);

/* What the plug-in tells the user when a fill ends (g_free it), e.g. "FlashPS: cache hit · 0.41 s". */
gchar *flashps_gimp_outcome_text (const FlashpsFillOutcome *outcome);

/* The fill layer's name, e.g. "FlashPS fill (seed 7)" (g_free it). */
gchar *flashps_gimp_layer_name (guint32 seed);

#endif /* FLASHPS_GIMP_FILL_H */
