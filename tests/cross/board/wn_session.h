/* Stand-in wn_session.h (see webnet.h). */
#ifndef __WN_SESSION_H__
#define __WN_SESSION_H__

#include <wn_request.h>
#include <sys/socket.h> /* as WebNet's, with RT_USING_SAL */

#define WEBNET_SESSION_BUFSZ (4 * 1024)

struct sockaddr_in_standin
{
    rt_uint8_t sin_len;
    rt_uint8_t sin_family;
    rt_uint16_t sin_port;
    rt_uint32_t sin_addr;
    char sin_zero[8];
};

struct webnet_session_ops;
struct webnet_session
{
    struct webnet_session *next;
    int socket;
    struct sockaddr_in_standin cliaddr;
    struct webnet_request *request;
    rt_uint16_t buffer_length;
    rt_uint16_t buffer_offset;
    rt_uint8_t buffer[WEBNET_SESSION_BUFSZ];
    rt_uint32_t session_phase;
    rt_uint32_t session_event_mask;
    const struct webnet_session_ops *session_ops;
    rt_uint32_t user_data;
};

int webnet_session_write(struct webnet_session *session, const rt_uint8_t *data, rt_size_t size);
void webnet_session_set_header(struct webnet_session *session, const char *mimetype, int code,
                               const char *status, int length);

#endif
