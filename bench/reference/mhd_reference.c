/* The reference for `make bench`: the smallest libmicrohttpd server that serves the same bytes as
 * Cartograph for GET /healthz and GET /v1/tenants/<t> (bearer token checked with strcmp), in the
 * same daemon mode (internal polling thread + epoll + thread pool). Usage:
 *   mhd_reference PORT THREADS TOKEN HEALTH_BODY TENANT_BODY */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *token, *health_body, *tenant_body;
static char bearer[512];

static enum MHD_Result respond(struct MHD_Connection *c, unsigned int status, const char *body) {
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "X-Request-Id", "0123456789abcdef");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **req) {
    (void)cls; (void)version; (void)data; (void)size;
    if (*req == NULL) { *req = (void *)1; return MHD_YES; }
    if (strcmp(method, "GET") != 0) return respond(c, 405, "{}");
    if (strcmp(url, "/healthz") == 0) return respond(c, 200, health_body);
    if (strncmp(url, "/v1/tenants/", 12) == 0) {
        const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        if (auth == NULL || strcmp(auth, bearer) != 0) return respond(c, 401, "{}");
        return respond(c, 200, tenant_body);
    }
    return respond(c, 404, "{}");
}

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: %s PORT THREADS TOKEN HEALTH_BODY TENANT_BODY\n", argv[0]); return 2; }
    token = argv[3]; health_body = argv[4]; tenant_body = argv[5];
    snprintf(bearer, sizeof bearer, "Bearer %s", token);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, (uint16_t)atoi(argv[1]), NULL, NULL,
        handler, NULL, MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)atoi(argv[2]),
        MHD_OPTION_CONNECTION_LIMIT, 1024u, MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_END);
    if (d == NULL) { fprintf(stderr, "cannot start\n"); return 1; }
    sigset_t set; sigemptyset(&set); sigaddset(&set, SIGTERM); sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig; sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}
