/* A minimal test harness: CHECK(cond) records a failure with its line; main returns check_exit(). */
#ifndef SDK_CHECK_H
#define SDK_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    check_count++;                                                               \
    if (!(cond)) {                                                               \
      check_failures++;                                                          \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
    }                                                                            \
  } while (0)

#define CHECK_STR(actual, expected)                                                          \
  do {                                                                                       \
    check_count++;                                                                           \
    const char *check_a_ = (actual);                                                         \
    const char *check_e_ = (expected);                                                       \
    if (strcmp(check_a_, check_e_) != 0) {                                                   \
      check_failures++;                                                                      \
      fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\"\n", __FILE__, __LINE__, check_e_, \
              check_a_);                                                                     \
    }                                                                                        \
  } while (0)

static inline int check_exit(const char *name) {
  if (check_failures) {
    fprintf(stderr, "%s: %d of %d checks failed\n", name, check_failures, check_count);
    return 1;
  }
  printf("%s: %d checks passed\n", name, check_count);
  return 0;
}

#endif /* SDK_CHECK_H */
