/* Regression test for issue 11, item 10: a host's SIGTERM handler calling
 * the async-signal-safe ferromcp_server_shutdown() shuts a stdio server down
 * gracefully. The open subscriptions/listen stream ends with its completion
 * result, the request in flight finishes, and serve returns FERROMCP_OK so
 * the host exits 0. (Before, shutdown dropped both without an answer.)
 *
 * The server runs in a forked child over two pipes; the slow tool writes one
 * byte to a third pipe when it starts, so the parent signals while it runs. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ferromcp.h"

#define META                                                                 \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
    "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static ferromcp_server *g_server = NULL;
static int g_started_fd = -1;

static void on_sigterm(int signo) {
    (void)signo;
    ferromcp_server_shutdown(g_server);
}

static void slow_tool(void *userdata, const char *arguments_json, size_t arguments_len,
                      ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    if (write(g_started_fd, "s", 1) != 1) {
        _exit(4);
    }
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    ferromcp_call_respond(call, "\"finished\"");
}

static void serve(int in_fd, int out_fd, int started_fd) {
    if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0) {
        _exit(3);
    }
    close(in_fd);
    close(out_fd);
    g_started_fd = started_fd;
    if (ferromcp_server_new("shutdown", "1.0.0", &g_server) != FERROMCP_OK ||
        ferromcp_server_add_tool(g_server, "slow", "Answers after a while.",
                                 "{\"type\":\"object\"}", NULL, slow_tool, NULL,
                                 NULL) != FERROMCP_OK) {
        _exit(3);
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_sigterm;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL);
    ferromcp_status status = ferromcp_server_serve_stdio(g_server);
    signal(SIGTERM, SIG_DFL);
    ferromcp_server_free(g_server);
    exit(status == FERROMCP_OK ? 0 : 5);
}

/* Reads one line (without the newline) into buf; returns 0 at EOF. */
static int read_line(FILE *from, char *buf, size_t size) {
    if (fgets(buf, (int)size, from) == NULL) {
        return 0;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return 1;
}

static void test_sigterm_ends_listen_streams_and_finishes_the_request(void) {
    int in[2], out[2], started[2];
    CHECK(pipe(in) == 0 && pipe(out) == 0 && pipe(started) == 0);
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(in[1]);
        close(out[0]);
        close(started[0]);
        serve(in[0], out[1], started[1]);
    }
    close(in[0]);
    close(out[1]);
    close(started[1]);
    static const char requests[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":"
        "{\"notifications\":{\"toolsListChanged\":true}," META "}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
        "{\"name\":\"slow\",\"arguments\":{}," META "}}\n";
    CHECK(write(in[1], requests, sizeof requests - 1) == (ssize_t)(sizeof requests - 1));
    FILE *from = fdopen(out[0], "r");
    CHECK(from != NULL);
    char line[4096];
    CHECK(read_line(from, line, sizeof line));
    CHECK_CONTAINS(line, "notifications/subscriptions/acknowledged");
    char byte = 0;
    CHECK(read(started[0], &byte, 1) == 1); /* the slow tool is running */

    CHECK(kill(child, SIGTERM) == 0);
    int listen_ended = 0, call_finished = 0;
    while (read_line(from, line, sizeof line)) {
        if (strstr(line, "\"id\":1") != NULL) {
            CHECK_CONTAINS(line, "\"resultType\":\"complete\"");
            CHECK_CONTAINS(line, "\"io.modelcontextprotocol/subscriptionId\":1");
            listen_ended = 1;
        } else if (strstr(line, "\"id\":2") != NULL) {
            CHECK_CONTAINS(line, "finished");
            call_finished = 1;
        }
    }
    CHECK(listen_ended);
    CHECK(call_finished);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    fclose(from);
    close(in[1]);
    close(started[0]);
}

int main(void) {
    test_sigterm_ends_listen_streams_and_finishes_the_request();
    return check_report("test_shutdown");
}
