/*
 * Preloaded into an sdk server (LD_PRELOAD) by `bench/scripts --fsync-delay-ms N` and by tests: every fsync and
 * fdatasync first sleeps N ms (SDK_BENCH_FSYNC_DELAY_MS), as a flush to an SD card or a busy USB
 * disk takes, then runs. Only the calling thread waits, as it would on such a disk.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

static void wait_as_a_slow_disk(void) {
  static long delay_ms = -1;
  if (delay_ms < 0) {
    const char *value = getenv("SDK_BENCH_FSYNC_DELAY_MS");
    delay_ms = value ? atol(value) : 0;
  }
  if (delay_ms <= 0) return;
  struct timespec left = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  wait_as_a_slow_disk();
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  wait_as_a_slow_disk();
  return real(fd);
}
