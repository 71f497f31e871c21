/* Minimal assertion helpers shared by the C tests (no test framework, so the
 * tests build with nothing but a C11 compiler). */
#ifndef FERROMCP_TEST_CHECK_H
#define FERROMCP_TEST_CHECK_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ferromcp.h"

/* Atomic: callbacks check things on ferromcp threads too. */
static atomic_int check_failures = 0;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

#define CHECK_STATUS(expr, expected)                                                   \
    do {                                                                               \
        ferromcp_status check_got_ = (expr);                                            \
        if (check_got_ != (expected)) {                                                \
            fprintf(stderr, "%s:%d: %s returned %d (%s: %s), expected %d\n", __FILE__, \
                    __LINE__, #expr, (int)check_got_, ferromcp_status_message(check_got_), \
                    ferromcp_last_error_message(), (int)(expected));                    \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

#define CHECK_CONTAINS(haystack, needle)                                               \
    do {                                                                               \
        const char *check_h_ = (haystack);                                             \
        if (check_h_ == NULL || strstr(check_h_, (needle)) == NULL) {                  \
            fprintf(stderr, "%s:%d: expected to find %s in: %s\n", __FILE__, __LINE__, \
                    (needle), check_h_ ? check_h_ : "(null)");                         \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

static inline void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline int check_report(const char *name) {
    if (atomic_load(&check_failures) == 0) {
        fprintf(stderr, "%s: all checks passed\n", name);
        return 0;
    }
    fprintf(stderr, "%s: %d check(s) failed\n", name, atomic_load(&check_failures));
    return 1;
}

#endif
