/* A minimal HTTP/1.1 exchange for the C tests that speak to a ferromcp
 * server over loopback without a client library: one request per
 * connection (`Connection: close`), the whole response read until the
 * server closes. Each test builds its own request; this is the socket part
 * they shared. `static inline`: a test that uses one of them draws no
 * unused-function warning for the other. */
#ifndef FERROMCP_TESTS_HTTP_UTIL_H
#define FERROMCP_TESTS_HTTP_UTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A TCP connection to 127.0.0.1:`port`: the socket, or -1. */
static inline int http_connect(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return -1;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends `request_len` bytes of `request` to 127.0.0.1:`port` and returns the
 * whole response, NUL-terminated and malloc'd (free() it), or NULL on a
 * transport failure. */
static inline char *http_exchange(uint16_t port, const char *request, size_t request_len) {
    int fd = http_connect(port);
    if (fd < 0) {
        return NULL;
    }
    for (size_t sent = 0; sent < request_len;) {
        ssize_t n = write(fd, request + sent, request_len - sent);
        if (n <= 0) {
            close(fd);
            return NULL;
        }
        sent += (size_t)n;
    }
    size_t capacity = 4096, used = 0;
    char *response = malloc(capacity);
    while (response != NULL) {
        if (used + 1 >= capacity) {
            char *bigger = realloc(response, capacity * 2);
            if (bigger == NULL) {
                free(response);
                response = NULL;
                break;
            }
            response = bigger;
            capacity *= 2;
        }
        ssize_t n = read(fd, response + used, capacity - used - 1);
        if (n < 0) {
            free(response);
            response = NULL;
            break;
        }
        if (n == 0) {
            response[used] = '\0';
            break;
        }
        used += (size_t)n;
    }
    close(fd);
    return response;
}

#endif
