/* FlashPS public C API: mask painting for interactive front ends — brush dabs with size and
 * hardness, strokes interpolated between pointer samples, rectangle and lasso fills, invert,
 * clear, fill, and the effective (grown, feathered) mask an edit pastes back with. Masks are
 * 1-channel 8-bit images, 255 = regenerate; every front end paints exactly the same pixels.
 *
 * Thread safety: functions on different masks may run in parallel; a stroke belongs to one thread.
 */
#ifndef FLASHPS_MASK_H
#define FLASHPS_MASK_H

#include "flashps/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pixel box; empty when width or height is 0. */
typedef struct flashps_rect {
  int32_t x, y, width, height;
} flashps_rect;

typedef struct flashps_brush {
  size_t struct_size;  /* sizeof(flashps_brush) */
  double diameter;     /* pixels (> 0) */
  double hardness;     /* fraction of the radius at full strength, 0..1 */
  int erase;           /* nonzero: lower the mask instead of raising it */
  double spacing;      /* distance between dabs, as a fraction of the diameter (> 0) */
} flashps_brush;

typedef struct flashps_mask_stroke flashps_mask_stroke; /* opaque */

FLASHPS_EXPORT flashps_brush flashps_brush_default(void);

/* The mask an image means, by the SDK's one rule (every edit reads masks by it): 1-channel as is;
 * RGB by its brightest channel, max(R, G, B), so a pure red stroke is fully masked; RGBA by
 * max(R, G, B) x alpha / 255, except when the strokes live in alpha alone (some pixel is
 * see-through and every visible one is black): then by alpha. 128 and above is regenerated.
 * New 1-channel image (free it). */
FLASHPS_EXPORT flashps_status flashps_mask_from_image(const flashps_image* image, flashps_image* mask);
/* The mask an edit of a width x height image reads from `image` (API 6): resized to that size
 * (nearest neighbour, as every edit resizes a mask of another size), then read by the rule above.
 * An edit regenerates exactly the pixels where it is 128 or above, so front ends that show or
 * hand on a selection (the app, plugin hosts) use this to select what the edit will. New
 * 1-channel image (free it). */
FLASHPS_EXPORT flashps_status flashps_mask_for_image(const flashps_image* image, uint32_t width, uint32_t height,
                                                     flashps_image* mask);

/* A stroke on `mask` (1-channel): the first dab at (x, y). The stroke keeps mask->pixels (not
 * the struct itself): that buffer must stay in place until flashps_mask_stroke_end.
 * `changed` (may be NULL) receives the box of pixels it may have changed. */
FLASHPS_EXPORT flashps_status flashps_mask_stroke_begin(flashps_image* mask, const flashps_brush* brush,
                                                        double x, double y, flashps_mask_stroke** stroke,
                                                        flashps_rect* changed);
/* Dabs from the last point to (x, y). */
FLASHPS_EXPORT flashps_status flashps_mask_stroke_extend(flashps_mask_stroke* stroke, double x, double y,
                                                         flashps_rect* changed);
/* Frees the stroke; `changed` (may be NULL) receives everything it touched. NULL is fine. */
FLASHPS_EXPORT void flashps_mask_stroke_end(flashps_mask_stroke* stroke, flashps_rect* changed);

/* Sets (value 255) or clears (0) every pixel whose centre lies inside the rectangle / polygon
 * (points as x0, y0, x1, y1, ...; even-odd rule). */
FLASHPS_EXPORT flashps_status flashps_mask_fill_rect(flashps_image* mask, flashps_rect rect, uint8_t value,
                                                     flashps_rect* changed);
FLASHPS_EXPORT flashps_status flashps_mask_fill_polygon(flashps_image* mask, const double* points,
                                                        size_t point_count, uint8_t value, flashps_rect* changed);
FLASHPS_EXPORT flashps_status flashps_mask_invert(flashps_image* mask);
FLASHPS_EXPORT flashps_status flashps_mask_clear(flashps_image* mask);
FLASHPS_EXPORT flashps_status flashps_mask_fill(flashps_image* mask);
/* The mask an edit pastes back with (grown, then feathered); new image (free it). */
FLASHPS_EXPORT flashps_status flashps_mask_effective(const flashps_image* mask, int grow_pixels,
                                                     int feather_pixels, flashps_image* result);
/* The smallest box holding every nonzero pixel (empty if none). */
FLASHPS_EXPORT flashps_status flashps_mask_bounds(const flashps_image* mask, flashps_rect* bounds);

#ifdef __cplusplus
}
#endif

#endif /* FLASHPS_MASK_H */
