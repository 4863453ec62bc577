/* The Generative Fill dialog for GIMP 3: the procedure's own arguments, in a GimpProcedureDialog. */
#ifndef FLASHPS_GIMP3_DIALOG_H
#define FLASHPS_GIMP3_DIALOG_H

#include <libgimp/gimp.h>

#define FLASHPS_GIMP3_BINARY "flashps-gimp3"

/* Shows the dialog on `config` (prompt, seed, new seed, steps, strength); TRUE when the user
 * pressed OK. GIMP keeps the values for the next run itself. */
gboolean flashps_gimp3_dialog (GimpProcedure *procedure, GimpProcedureConfig *config);

#endif /* FLASHPS_GIMP3_DIALOG_H */
