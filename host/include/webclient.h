/* webclient.h of the host port: the webclient 2.x API, served over real TCP
 * by the host port. */
#ifndef __WEBCLIENT_H__
#define __WEBCLIENT_H__

#include <rtthread.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEBCLIENT_HEADER_BUFSZ 4096
#define WEBCLIENT_RESPONSE_BUFSZ 4096

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

enum WEBCLIENT_METHOD
{
    WEBCLIENT_USER_METHOD,
    WEBCLIENT_GET,
    WEBCLIENT_POST,
    WEBCLIENT_HEAD
};

struct webclient_session;

struct webclient_session *webclient_session_create(size_t header_sz);
int webclient_set_timeout(struct webclient_session *session, int millisecond);
int webclient_header_fields_add(struct webclient_session *session, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *webclient_header_fields_get(struct webclient_session *session, const char *fields);
int webclient_get(struct webclient_session *session, const char *URI);
int webclient_post(struct webclient_session *session, const char *URI, const void *post_data, size_t data_len);
int webclient_write(struct webclient_session *session, const void *buffer, size_t size);
int webclient_read(struct webclient_session *session, void *buffer, size_t size);
int webclient_resp_status_get(struct webclient_session *session);
int webclient_content_length_get(struct webclient_session *session);
int webclient_close(struct webclient_session *session);
int webclient_handle_response(struct webclient_session *session);
/* With WEBCLIENT_USING_FILE_DOWMLOAD (PKG_AGENT_MULTIMODAL_ENABLE selects it). */
int webclient_get_file(const char *URI, const char *filename);

#ifdef __cplusplus
}
#endif

#endif
