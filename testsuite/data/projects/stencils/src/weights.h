/* Found next to the including source (a quoted include), not through -I. */
#define CENTER_WEIGHT 4.0
#define THIRD (1.0 / 3.0)
