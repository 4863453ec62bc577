/* GIMP 3 drawables and selections <-> flashps_image (8-bit, interleaved). */
#ifndef FLASHPS_GIMP3_PIXELS_H
#define FLASHPS_GIMP3_PIXELS_H

#include <libgimp/gimp.h>

#include <flashps/common.h>

/* The layer's pixels as RGBA (opaque alpha when the layer has none). Free with flashps_image_free. */
gboolean flashps_gimp3_read_layer (GimpDrawable *drawable, flashps_image *image);

/* The image's selection over the layer's area, as a 1-channel mask of the layer's size
 * (255 = regenerate; antialiased edges keep their grey). Returns the number of selected pixels. */
gint64 flashps_gimp3_read_selection (GimpImage *image, GimpDrawable *drawable, flashps_image *mask);

/* The layer whose pixels a fill reads: a FlashPS fill layer remembers its source, so a new fill
 * started on it edits the same template (a cache hit) instead of the previous result. */
GimpLayer *flashps_gimp3_fill_source (GimpImage *image, GimpLayer *layer);

/* Adds `result` (the source layer's size) as a new layer just above `above`, at the source's
 * offsets, masked by the current selection; returns the layer or NULL. */
GimpLayer *flashps_gimp3_add_fill_layer (GimpImage *image, GimpLayer *above, GimpLayer *source,
                                         const flashps_image *result, const gchar *name);

#endif /* FLASHPS_GIMP3_PIXELS_H */
