/* The README's OAuth client in C: `oauth-client-c URL` logs in to a
 * protected MCP server (the user opens the printed URL; the browser comes
 * back to a listener on 127.0.0.1:8765) and lists its tools. */
#include <stdio.h>

#include "ferromcp.h"

/* Runs on a ferromcp host thread: it may block while the user logs in. */
static void authorize(void *userdata, const char *url, ferromcp_oauth_reply *reply) {
    (void)userdata;
    ferromcp_oauth_loopback *loopback = NULL;
    char *redirect = NULL;
    if (ferromcp_oauth_loopback_bind(8765, "/callback", &loopback) == FERROMCP_OK) {
        printf("Open this URL to authorize: %s\n", url);
        fflush(stdout);
        if (ferromcp_oauth_loopback_wait(loopback, 300000, &redirect) == FERROMCP_OK) {
            ferromcp_oauth_reply_set(reply, redirect);
        }
    }
    if (redirect == NULL) ferromcp_oauth_reply_fail(reply, ferromcp_last_error_message());
    ferromcp_string_free(redirect);
    ferromcp_oauth_loopback_free(loopback);
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : "http://127.0.0.1:8000/mcp";
    ferromcp_oauth_options *oauth = NULL;
    ferromcp_client_options *options = NULL;
    ferromcp_client *client = NULL;
    char *page = NULL;
    /* The login happens inside the first call: leave the user time. */
    ferromcp_status status = ferromcp_client_options_new("{\"timeoutMs\":600000}", &options);
    if (status == FERROMCP_OK)
        status = ferromcp_oauth_options_new("{\"redirectUri\":\"http://127.0.0.1:8765/callback\"}",
                                            &oauth);
    if (status == FERROMCP_OK)
        status = ferromcp_oauth_options_on_authorize(oauth, authorize, NULL, NULL);
    if (status == FERROMCP_OK) status = ferromcp_client_options_set_oauth(options, oauth);
    if (status == FERROMCP_OK) status = ferromcp_client_connect_http(url, NULL, options, &client);
    if (status == FERROMCP_OK)
        status = ferromcp_client_list(client, FERROMCP_LIST_TOOLS, NULL, &page);
    if (status == FERROMCP_OK) {
        printf("%s\n", page);
    } else {
        fprintf(stderr, "failed: %s (status %d)\n", ferromcp_last_error_message(), (int)status);
    }
    ferromcp_string_free(page);
    ferromcp_client_free(client);
    ferromcp_client_options_free(options);
    ferromcp_oauth_options_free(oauth);
    return status == FERROMCP_OK ? 0 : 1;
}
