/* The host port's clock, randomness and console log. */
#include "sdk_port.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

uint64_t sdk_port_now_ms(void) {
  struct timespec now;
  if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) {
    sdk_port_log(SDK_LOG_ERROR, "clock_gettime(CLOCK_MONOTONIC) failed");
    abort();
  }
  return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

/* A device without randomness (WebSocket masks, TLS) must not run: abort rather than go on. */
void sdk_port_random(uint8_t *out, size_t n) {
  size_t filled = 0;
  while (filled < n) {
    ssize_t got = getrandom(out + filled, n - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      char line[128];
      (void)snprintf(line, sizeof line, "getrandom failed: %s", strerror(errno));
      sdk_port_log(SDK_LOG_ERROR, line);
      abort();
    }
    filled += (size_t)got;
  }
}

static const char *level_name(int level) {
  switch (level) {
    case SDK_LOG_DEBUG: return "DEBUG";
    case SDK_LOG_INFO: return "INFO";
    case SDK_LOG_WARN: return "WARN";
    case SDK_LOG_ERROR: return "ERROR";
    default: return "LOG";
  }
}

/* One line per call, written with one fwrite so lines from several processes do not interleave;
 * control characters in the message become spaces, and a long message is cut. */
void sdk_port_log(int level, const char *message) {
  char line[1024];
  int prefix = snprintf(line, sizeof line, "%s ", level_name(level));
  if (prefix < 0) return;
  size_t at = (size_t)prefix;
  for (const char *c = message ? message : ""; *c != '\0' && at < sizeof line - 1; c++) {
    unsigned char ch = (unsigned char)*c;
    line[at++] = (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
  }
  line[at++] = '\n';
  (void)fwrite(line, 1, at, stderr);
}
