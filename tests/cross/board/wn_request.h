/* Stand-in wn_request.h (see webnet.h): struct webnet_request with WebNet
 * 2.0.3's default options. */
#ifndef __WN_REQUEST_H__
#define __WN_REQUEST_H__

#include <rtthread.h>

enum webnet_method
{
    WEBNET_UNKNOWN = 0, WEBNET_GET, WEBNET_POST, WEBNET_HEADER, WEBNET_HEAD, WEBNET_PUT, WEBNET_OPTIONS,
    WEBNET_PROPFIND, WEBNET_PROPPATCH, WEBNET_DELETE, WEBNET_CONNECT, WEBNET_MKCOL, WEBNET_MOVE,
    WEBNET_SUBSCRIBE, WEBNET_UNSUBSCRIBE, WEBNET_NOTIFY,
};

enum webnet_connection { WEBNET_CONN_CLOSE, WEBNET_CONN_KEEPALIVE };

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
    char *Range;
    rt_size_t pos_start;
    rt_size_t pos_end;
    char *soap_action;
    char *callback;
    char *sid;
    char *content_type;
    char *query;
    int query_offset;
    struct webnet_query_item *query_items;
    rt_uint16_t query_counter;
    enum webnet_connection connection;
    rt_bool_t field_copied;
};

const char *webnet_request_get_query(struct webnet_request *request, char *name);

#endif
