/* wn_session.h of the host port (see webnet.h). */
#ifndef __WN_SESSION_H__
#define __WN_SESSION_H__

#include <netinet/in.h>
#include <wn_request.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEBNET_SESSION_BUFSZ (4 * 1024)

enum webnet_session_phase
{
    WEB_PHASE_METHOD = 0,
    WEB_PHASE_HEADER,
    WEB_PHASE_QUERY,
    WEB_PHASE_RESPONSE,
    WEB_PHASE_CLOSE,
};

struct webnet_session_ops;

struct webnet_session
{
    struct webnet_session *next;
    int socket;
    struct sockaddr_in cliaddr;
    struct webnet_request *request;
    rt_uint16_t buffer_length;
    rt_uint16_t buffer_offset;
    rt_uint8_t buffer[WEBNET_SESSION_BUFSZ];
    rt_uint32_t session_phase;
    rt_uint32_t session_event_mask;
    const struct webnet_session_ops *session_ops;
    rt_uint32_t user_data;
};

int webnet_session_read(struct webnet_session *session, char *buffer, int length);
void webnet_session_close(struct webnet_session *session);
/* Formats into the session's 4 KB buffer and sends it (WebNet overruns the
 * buffer past 4095 bytes; the host port aborts instead). */
void webnet_session_printf(struct webnet_session *session, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* One send(); WebNet ignores its result and returns size. */
int webnet_session_write(struct webnet_session *session, const rt_uint8_t *data, rt_size_t size);
/* Status line, Server, Content-Type, then Content-Length and "Connection:
 * Keep-Alive" (or close) for length >= 0, or only "Connection: close". */
void webnet_session_set_header(struct webnet_session *session, const char *mimetype, int code,
                               const char *status, int length);
void webnet_session_set_header_status_line(struct webnet_session *session, int code,
                                           const char *reason_phrase);

#ifdef __cplusplus
}
#endif

#endif
