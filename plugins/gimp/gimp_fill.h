/* The FlashPS edit behind Generative Fill, through the public C API and the shared template cache. */
#ifndef FLASHPS_GIMP_FILL_H
#define FLASHPS_GIMP_FILL_H

#include <glib.h>

#include <flashps/flashps.h>

typedef struct
{
  const gchar *prompt;
  guint64      seed;
  gint         steps;    /* 0: the model's default */
  gfloat       strength; /* (0, 1] */
} FlashpsFillSettings;

typedef struct
{
  gboolean cache_hit;     /* the template was in the store before this fill */
  gboolean captured;      /* this fill captured it (a miss on a writable store) */
  gdouble  seconds;       /* lookup, capture and edit; not the model's loading */
  gchar   *note;          /* why nothing was captured, or NULL; g_free it */
} FlashpsFillOutcome;

/* Regenerates the masked part of `image` into `result` (free with flashps_image_free). On
 * failure returns FALSE and sets *error to a message to show (g_free it). */
gboolean flashps_gimp_fill (const flashps_image *image, const flashps_image *mask,
                            const FlashpsFillSettings *settings, flashps_image *result,
                            FlashpsFillOutcome *outcome, gchar **error);

#endif /* FLASHPS_GIMP_FILL_H */
