/* webnet.h of the host port: the part of WebNet 2.0.x's API the agent's
 * WebNet channel uses, served over real TCP on 127.0.0.1 by
 * host/port/webnet_port.c. Names, types and behaviour follow WebNet's
 * sources (RT-Thread-packages/webnet, GPL-2.0); none of its code is here. */
#ifndef __WEBNET_H__
#define __WEBNET_H__

#include <rtthread.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEBNET_VERSION "2.0.3"
#define WEBNET_VERSION_NUM 0x20003
#define WEBNET_THREAD_NAME "webnet"
#define WEBNET_THREAD_STACKSIZE (4 * 1024)
#define WEBNET_PRIORITY 20
#define WEBNET_PATH_MAX 256
#define WEBNET_SERVER "Server: webnet " WEBNET_VERSION "\r\n"

struct webnet_session;
struct webnet_query_item
{
    char *name;
    char *value;
};

/* Before webnet_init only (WebNet asserts). Port 0: any free port (host
 * port only; rt_host_webnet_bound_port() tells which). */
void webnet_set_port(int port);
int webnet_get_port(void);
void webnet_set_root(const char *webroot_path);
const char *webnet_get_root(void);
/* Starts the "webnet" thread once; WebNet has no way to stop it. */
int webnet_init(void);

#ifdef __cplusplus
}
#endif

#include <wn_request.h>
#include <wn_session.h>

#endif
