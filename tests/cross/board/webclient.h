/*
 * Stand-in "webclient.h" for the cross-build link check: the webclient 2.x
 * session API the library uses. Written for these tests.
 */
#ifndef __WEBCLIENT_H__
#define __WEBCLIENT_H__

#include <rtthread.h>

#ifdef __cplusplus
extern "C" {
#endif

enum WEBCLIENT_STATUS
{
    WEBCLIENT_OK,
    WEBCLIENT_ERROR,
    WEBCLIENT_TIMEOUT,
    WEBCLIENT_NOMEM,
    WEBCLIENT_NOSOCKET,
    WEBCLIENT_NOBUFFER,
    WEBCLIENT_CONNECT_FAILED,
    WEBCLIENT_DISCONNECT,
    WEBCLIENT_FILE_ERROR,
};

struct webclient_session;

struct webclient_session *webclient_session_create(size_t header_sz);
int webclient_set_timeout(struct webclient_session *session, int millisecond);
int webclient_header_fields_add(struct webclient_session *session, const char *fmt, ...);
int webclient_post(struct webclient_session *session, const char *URI, const void *post_data, size_t data_len);
int webclient_write(struct webclient_session *session, const void *buffer, size_t size);
int webclient_read(struct webclient_session *session, void *buffer, size_t size);
int webclient_resp_status_get(struct webclient_session *session);
int webclient_content_length_get(struct webclient_session *session);
int webclient_close(struct webclient_session *session);

#ifdef __cplusplus
}
#endif

#endif
