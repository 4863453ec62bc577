/* Counts the pixels that differ between two images of one size, inside and outside a rectangle,
 * with the public C API only. A margin keeps an antialiased edge out of both counts: "inside" is
 * the rectangle shrunk by it, "outside" everything beyond the rectangle grown by it.
 *
 *   image_region_diff A B X Y WIDTH HEIGHT [MARGIN=0] [TOLERANCE=0]
 * prints "inside CHANGED TOTAL" and "outside CHANGED TOTAL"; a pixel differs when a channel
 * (RGB; alpha too when both have it) differs by more than TOLERANCE. Exit 0, or 2 on bad input. */
#include <stdio.h>
#include <stdlib.h>

#include <flashps/common.h>

static int load (const char *path, flashps_image *image)
{
  if (flashps_image_load (path, image) == FLASHPS_OK) return 1;
  fprintf (stderr, "image_region_diff: %s\n", flashps_last_error ());
  return 0;
}

static int differs (const flashps_image *a, const flashps_image *b, size_t pixel, int tolerance)
{
  const uint32_t channels = a->channels < b->channels ? a->channels : b->channels;
  for (uint32_t c = 0; c < (channels >= 3 ? channels : 1); c++)
    {
      /* A grey image compares its one channel with each colour channel of the other. */
      const int va = a->pixels[pixel * a->channels + (a->channels >= 3 ? c : 0)];
      const int vb = b->pixels[pixel * b->channels + (b->channels >= 3 ? c : 0)];
      if (abs (va - vb) > tolerance) return 1;
    }
  return 0;
}

int main (int argc, char **argv)
{
  flashps_image a = { 0 }, b = { 0 };
  long long inside_changed = 0, inside_total = 0, outside_changed = 0, outside_total = 0;
  if (argc < 7)
    {
      fprintf (stderr, "usage: image_region_diff A B X Y WIDTH HEIGHT [MARGIN] [TOLERANCE]\n");
      return 2;
    }
  const long x = atol (argv[3]), y = atol (argv[4]), w = atol (argv[5]), h = atol (argv[6]);
  const long margin = argc > 7 ? atol (argv[7]) : 0;
  const int tolerance = argc > 8 ? atoi (argv[8]) : 0;
  if (!load (argv[1], &a) || !load (argv[2], &b)) return 2;
  if (a.width != b.width || a.height != b.height)
    {
      fprintf (stderr, "image_region_diff: sizes differ: %ux%u and %ux%u\n", a.width, a.height,
               b.width, b.height);
      return 2;
    }
  for (long py = 0; py < (long) a.height; py++)
    for (long px = 0; px < (long) a.width; px++)
      {
        const int changed = differs (&a, &b, (size_t) py * a.width + px, tolerance);
        if (px >= x + margin && px < x + w - margin && py >= y + margin && py < y + h - margin)
          inside_total++, inside_changed += changed;
        else if (px < x - margin || px >= x + w + margin || py < y - margin || py >= y + h + margin)
          outside_total++, outside_changed += changed;
      }
  printf ("inside %lld %lld\noutside %lld %lld\n", inside_changed, inside_total, outside_changed,
          outside_total);
  flashps_image_free (&a);
  flashps_image_free (&b);
  return 0;
}
