/* Pixel transfer between GIMP 3 (through GEGL buffers) and FlashPS images; the same layer model
 * as the GIMP 2.10 plug-in (plugins/gimp/gimp_pixels.c), on libgimp 3's object API. */
#include "gimp3_pixels.h"

#include <string.h>

#include "gimp_fill.h"

/* Parasite on a fill layer holding its source layer's tattoo (tattoos survive XCF saves); the
 * GIMP 2.10 plug-in writes the same one, so an XCF filled in either is understood by both. */
#define FILL_SOURCE_PARASITE "flashps-fill-source"

gboolean
flashps_gimp3_read_layer (GimpDrawable *drawable, flashps_image *image)
{
  const gint width = gimp_drawable_get_width (drawable);
  const gint height = gimp_drawable_get_height (drawable);
  GeglBuffer *buffer;

  if (flashps_image_create (width, height, 4, image) != FLASHPS_OK)
    return FALSE;
  buffer = gimp_drawable_get_buffer (drawable);
  gegl_buffer_get (buffer, GEGL_RECTANGLE (0, 0, width, height), 1.0, babl_format ("R'G'B'A u8"),
                   image->pixels, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  g_object_unref (buffer);
  return TRUE;
}

gint64
flashps_gimp3_read_selection (GimpImage *image, GimpDrawable *drawable, flashps_image *mask)
{
  const gint width = gimp_drawable_get_width (drawable);
  const gint height = gimp_drawable_get_height (drawable);
  gint offset_x = 0, offset_y = 0;
  gboolean non_empty = FALSE;
  gint x1, y1, x2, y2;
  GeglBuffer *buffer;

  if (! gimp_selection_bounds (image, &non_empty, &x1, &y1, &x2, &y2) || ! non_empty)
    return 0;
  if (flashps_image_create (width, height, 1, mask) != FLASHPS_OK)
    return 0;
  /* The selection channel has the image's size: read the layer's window of it (zero outside). */
  gimp_drawable_get_offsets (drawable, &offset_x, &offset_y);
  buffer = gimp_drawable_get_buffer (GIMP_DRAWABLE (gimp_image_get_selection (image)));
  gegl_buffer_get (buffer, GEGL_RECTANGLE (offset_x, offset_y, width, height), 1.0,
                   babl_format ("Y u8"), mask->pixels, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  g_object_unref (buffer);
  return flashps_gimp_mask_coverage (mask);
}

GimpLayer *
flashps_gimp3_fill_source (GimpImage *image, GimpLayer *layer)
{
  GimpParasite *parasite = gimp_item_get_parasite (GIMP_ITEM (layer), FILL_SOURCE_PARASITE);
  GimpLayer *source = layer;

  if (parasite != NULL)
    {
      guint32 size = 0;
      gconstpointer data = gimp_parasite_get_data (parasite, &size);
      guint32 tattoo;
      GimpLayer *found;

      if (size == sizeof tattoo)
        {
          memcpy (&tattoo, data, sizeof tattoo);
          found = gimp_image_get_layer_by_tattoo (image, tattoo);
          /* The source must still exist and have the fill's size, else the fill itself is edited. */
          if (found != NULL &&
              gimp_drawable_get_width (GIMP_DRAWABLE (found)) == gimp_drawable_get_width (GIMP_DRAWABLE (layer)) &&
              gimp_drawable_get_height (GIMP_DRAWABLE (found)) == gimp_drawable_get_height (GIMP_DRAWABLE (layer)))
            source = found;
        }
      gimp_parasite_free (parasite);
    }
  return source;
}

GimpLayer *
flashps_gimp3_add_fill_layer (GimpImage *image, GimpLayer *above, GimpLayer *source,
                              const flashps_image *result, const gchar *name)
{
  const Babl *format = babl_format (result->channels == 4 ? "R'G'B'A u8" : "R'G'B' u8");
  GimpItem *parent = gimp_item_get_parent (GIMP_ITEM (above));
  guint32 tattoo = gimp_item_get_tattoo (GIMP_ITEM (source));
  gint offset_x = 0, offset_y = 0;
  GimpParasite *parasite;
  GimpLayerMask *mask;
  GeglBuffer *buffer;
  GimpLayer *layer;

  layer = gimp_layer_new (image, name, result->width, result->height, GIMP_RGBA_IMAGE, 100.0,
                          GIMP_LAYER_MODE_NORMAL);
  if (layer == NULL)
    return NULL;
  /* Inserting at `above`'s position pushes it down: the fill lands right above it. */
  if (! gimp_image_insert_layer (image, layer, GIMP_IS_LAYER (parent) ? GIMP_LAYER (parent) : NULL,
                                 gimp_image_get_item_position (image, GIMP_ITEM (above))))
    {
      gimp_item_delete (GIMP_ITEM (layer));
      return NULL;
    }
  gimp_drawable_get_offsets (GIMP_DRAWABLE (source), &offset_x, &offset_y);
  gimp_layer_set_offsets (layer, offset_x, offset_y);

  buffer = gimp_drawable_get_buffer (GIMP_DRAWABLE (layer));
  gegl_buffer_set (buffer, GEGL_RECTANGLE (0, 0, result->width, result->height), 0, format,
                   result->pixels, GEGL_AUTO_ROWSTRIDE);
  gegl_buffer_flush (buffer);
  g_object_unref (buffer);
  gimp_drawable_update (GIMP_DRAWABLE (layer), 0, 0, result->width, result->height);

  /* Non-destructive: the selection becomes the layer's mask, the source layer stays as it was. */
  mask = gimp_layer_create_mask (layer, GIMP_ADD_MASK_SELECTION);
  if (mask == NULL || ! gimp_layer_add_mask (layer, mask))
    return NULL;
  parasite = gimp_parasite_new (FILL_SOURCE_PARASITE, GIMP_PARASITE_PERSISTENT, sizeof tattoo, &tattoo);
  gimp_item_attach_parasite (GIMP_ITEM (layer), parasite);
  gimp_parasite_free (parasite);
  return layer;
}
