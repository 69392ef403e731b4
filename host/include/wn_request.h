/* wn_request.h of the host port (see webnet.h). The fields a CGI handler
 * reads keep WebNet's names; options the host port does not model (Range,
 * DAV, DMR, gzip, cache) are left out, so code must use the names, never the
 * layout. */
#ifndef __WN_REQUEST_H__
#define __WN_REQUEST_H__

#include <rtthread.h>

#ifdef __cplusplus
extern "C" {
#endif

enum webnet_method
{
    WEBNET_UNKNOWN = 0,
    WEBNET_GET,
    WEBNET_POST,
    WEBNET_HEADER,
    WEBNET_HEAD,
    WEBNET_PUT,
    WEBNET_OPTIONS,
    WEBNET_PROPFIND,
    WEBNET_PROPPATCH,
    WEBNET_DELETE,
    WEBNET_CONNECT,
    WEBNET_MKCOL,
    WEBNET_MOVE,
    WEBNET_SUBSCRIBE,
    WEBNET_UNSUBSCRIBE,
    WEBNET_NOTIFY,
};

enum webnet_connection
{
    WEBNET_CONN_CLOSE,
    WEBNET_CONN_KEEPALIVE,
};

struct webnet_session;
struct webnet_query_item;

struct webnet_request
{
    enum webnet_method method;
    int result_code;
    int content_length;

    struct webnet_session *session;

    char *path;
    char *host;
    char *authorization;
    char *user_agent;
    char *accept_language;
    char *cookie;
    char *referer;

    char *content_type;

    /* The URL's query, or (POST, not multipart, shorter than 8 KB) the body,
     * NUL-terminated. */
    char *query;
    int query_offset;
    struct webnet_query_item *query_items;
    rt_uint16_t query_counter;

    enum webnet_connection connection;
    rt_bool_t field_copied;
};

rt_bool_t webnet_request_has_query(struct webnet_request *request, char *name);
const char *webnet_request_get_query(struct webnet_request *request, char *name);

#ifdef __cplusplus
}
#endif

#endif
