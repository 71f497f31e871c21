/* Regression test for issue 11, item 1: the library must never kill its host
 * with SIGPIPE. A C program keeps SIGPIPE's default action (terminate), unlike
 * Rust, Python and Node hosts; writing an answer to a stdout whose reader went
 * away must give the library an EPIPE error, not end the process.
 *
 * The server runs in a forked child whose stdin holds one malformed line (the
 * server answers it with a JSON-RPC parse error, so it has to write) and whose
 * stdout is a pipe with no reader. The parent checks the child exited on its
 * own instead of dying of SIGPIPE. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "ferromcp.h"

static void serve_into_a_closed_pipe(void) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) {
        _exit(3);
    }
    static const char line[] = "this is not JSON\n";
    if (write(in[1], line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) {
        _exit(3);
    }
    close(in[1]);  /* stdin ends after the line */
    close(out[0]); /* nobody will read stdout */
    if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0) {
        _exit(3);
    }
    close(in[0]);
    close(out[1]);

    ferromcp_server *server = NULL;
    if (ferromcp_server_new("sigpipe", "1.0.0", &server) != FERROMCP_OK) {
        _exit(3);
    }
    /* Whatever the status (the write failed), returning at all is the point. */
    (void)ferromcp_server_serve_stdio(server);
    ferromcp_server_free(server);
    exit(0);
}

static void test_a_vanished_stdout_reader_does_not_kill_the_host(void) {
    signal(SIGPIPE, SIG_DFL); /* what a C main has */
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        serve_into_a_closed_pipe();
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "the serving process died of signal %d (%s)\n", WTERMSIG(status),
                strsignal(WTERMSIG(status)));
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
    test_a_vanished_stdout_reader_does_not_kill_the_host();
    return check_report("test_sigpipe");
}
