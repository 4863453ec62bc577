/* Pixel transfer between GIMP (through GEGL buffers) and FlashPS images. */
#include "gimp_pixels.h"

#include <string.h>

#include "gimp_fill.h"

/* Parasite on a fill layer holding its source layer's tattoo (tattoos survive XCF saves). */
#define FILL_SOURCE_PARASITE "flashps-fill-source"

gboolean
flashps_gimp_read_layer (gint32 drawable, flashps_image *image)
{
  const gint width = gimp_drawable_width (drawable);
  const gint height = gimp_drawable_height (drawable);
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
flashps_gimp_read_selection (gint32 image, gint32 drawable, flashps_image *mask)
{
  const gint width = gimp_drawable_width (drawable);
  const gint height = gimp_drawable_height (drawable);
  gint offset_x = 0, offset_y = 0;
  gboolean non_empty = FALSE;
  gint x1, y1, x2, y2;
  GeglBuffer *buffer;

  if (! gimp_selection_bounds (image, &non_empty, &x1, &y1, &x2, &y2) || ! non_empty)
    return 0;
  if (flashps_image_create (width, height, 1, mask) != FLASHPS_OK)
    return 0;
  /* The selection channel has the image's size: read the layer's window of it (zero outside). */
  gimp_drawable_offsets (drawable, &offset_x, &offset_y);
  buffer = gimp_drawable_get_buffer (gimp_image_get_selection (image));
  gegl_buffer_get (buffer, GEGL_RECTANGLE (offset_x, offset_y, width, height), 1.0,
                   babl_format ("Y u8"), mask->pixels, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  g_object_unref (buffer);
  return flashps_gimp_mask_coverage (mask);
}

gint32
flashps_gimp_fill_source (gint32 image, gint32 drawable)
{
  GimpParasite *parasite = gimp_item_get_parasite (drawable, FILL_SOURCE_PARASITE);
  gint32 source = drawable;

  if (parasite != NULL && gimp_parasite_data_size (parasite) == sizeof (guint32))
    {
      guint32 tattoo;
      gint32 found;

      memcpy (&tattoo, gimp_parasite_data (parasite), sizeof tattoo);
      found = gimp_image_get_layer_by_tattoo (image, tattoo);
      /* The source must still exist and have the fill's size, else the fill itself is edited. */
      if (found > 0 && gimp_drawable_width (found) == gimp_drawable_width (drawable) &&
          gimp_drawable_height (found) == gimp_drawable_height (drawable))
        source = found;
    }
  if (parasite != NULL)
    gimp_parasite_free (parasite);
  return source;
}

gint32
flashps_gimp_add_fill_layer (gint32 image, gint32 above, gint32 source,
                             const flashps_image *result, const gchar *name)
{
  const Babl *format = babl_format (result->channels == 4 ? "R'G'B'A u8" : "R'G'B' u8");
  gint32 parent = gimp_item_get_parent (above);
  gint offset_x = 0, offset_y = 0;
  guint32 tattoo = gimp_item_get_tattoo (source);
  GimpParasite *parasite;
  GeglBuffer *buffer;
  gint32 layer, mask;

  layer = gimp_layer_new (image, name, result->width, result->height, GIMP_RGBA_IMAGE, 100.0,
                          GIMP_LAYER_MODE_NORMAL);
  if (layer < 0)
    return -1;
  /* Inserting at `above`'s position pushes it down: the fill lands right above it. */
  if (! gimp_image_insert_layer (image, layer, parent > 0 ? parent : -1,
                                 gimp_image_get_item_position (image, above)))
    {
      gimp_item_delete (layer);
      return -1;
    }
  gimp_drawable_offsets (source, &offset_x, &offset_y);
  gimp_layer_set_offsets (layer, offset_x, offset_y);

  buffer = gimp_drawable_get_buffer (layer);
  gegl_buffer_set (buffer, GEGL_RECTANGLE (0, 0, result->width, result->height), 0, format,
                   result->pixels, GEGL_AUTO_ROWSTRIDE);
  gegl_buffer_flush (buffer);
  g_object_unref (buffer);
  gimp_drawable_update (layer, 0, 0, result->width, result->height);

  /* Non-destructive: the selection becomes the layer's mask, the source layer stays as it was. */
  mask = gimp_layer_create_mask (layer, GIMP_ADD_MASK_SELECTION);
  if (mask < 0 || ! gimp_layer_add_mask (layer, mask))
    return -1;
  parasite = gimp_parasite_new (FILL_SOURCE_PARASITE, GIMP_PARASITE_PERSISTENT, sizeof tattoo, &tattoo);
  gimp_item_attach_parasite (layer, parasite);
  gimp_parasite_free (parasite);
  return layer;
}
