/*
 * The control channel of sdk-firmware-host: one stdin line in, one stdout line out
 * (packages/conformance/README.md, "Control protocol for a host build").
 */
#ifndef HOST_CONTROL_H
#define HOST_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

/* Room for any answer (a strip of 1024 pixels: "ok" and 1024 × " rrggbb"). */
#define HOST_CONTROL_ANSWER_MAX 8192u

/* Runs one control line (without its newline) and writes the answer line, without newline, into
 * answer: "ok", "ok <values>" or "error <message>". Returns true for `stop` (answered "ok"): the
 * caller then closes with 1000 and exits 0. */
bool host_control_line(const char *line, char *answer, size_t cap);

#endif /* HOST_CONTROL_H */
