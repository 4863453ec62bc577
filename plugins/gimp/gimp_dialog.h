/* The Generative Fill dialog and the values GIMP remembers between runs. */
#ifndef FLASHPS_GIMP_DIALOG_H
#define FLASHPS_GIMP_DIALOG_H

#include <glib.h>

#define FLASHPS_GIMP_BINARY "flashps-generative-fill"

/* Kept with gimp_set_data/gimp_get_data: plain data of a fixed size. */
typedef struct
{
  gchar    prompt[256];
  gint32   seed;
  gboolean randomize; /* a new seed on every run (the dialog's "Randomize") */
  gint32   steps;     /* 0: the model's default */
  gdouble  strength;
} FlashpsGimpValues;

/* Shows the dialog; TRUE when the user pressed OK (values updated). */
gboolean flashps_gimp_dialog (FlashpsGimpValues *values);

#endif /* FLASHPS_GIMP_DIALOG_H */
