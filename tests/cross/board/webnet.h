/*
 * Stand-in webnet.h for the cross-build link check: the declarations of
 * WebNet 2.0.3 (RT-Thread-packages/webnet, GPL-2.0) that the agent's WebNet
 * glue uses, with its default options (range, keep-alive, cookie; no DAV,
 * gzip or cache). Written for these tests from WebNet's headers; no WebNet
 * code.
 */
#ifndef __WEBNET_H__
#define __WEBNET_H__

#include <rtthread.h>

struct webnet_session;
struct webnet_query_item
{
    char *name;
    char *value;
};

void webnet_set_port(int port);
int webnet_get_port(void);
int webnet_init(void);

#endif
