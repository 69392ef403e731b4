/*
 * MessageHub.h - typed message arrays and the hub that carries them between
 * channels and the agent loop (two RT-Thread mailboxes).
 * Implemented in Rust (src/ffi/messages.rs, src/ffi/hub.rs).
 */
#ifndef __AGENT_MESSAGE_HUB_H__
#define __AGENT_MESSAGE_HUB_H__

#include <rtthread.h>
#include "cJSON.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESSAGE_HUB_INPUT_MAILBOX_SIZE  10
#define MESSAGE_HUB_OUTPUT_MAILBOX_SIZE 10
#define MESSAGE_HUB_INPUT_NAME  "AgentInputMb"
#define MESSAGE_HUB_OUTPUT_NAME "AgentOutMb"

typedef enum MessageType
{
    TYPE_TEXT,
    TYPE_AUDIO,
    TYPE_IMAGE,
    TYPE_VIDEO,
    TYPE_NULL
} MessageType;

typedef struct MessageItem
{
    MessageType message_type;
    char *content;
} MessageItem, *MessageItem_t;

typedef struct Messages
{
    MessageItem_t message_ptr;
    int max_size;
    int current_size;
} Messages, *Messages_t;

typedef struct MessageHub
{
    rt_mailbox_t input_mailbox;
    rt_mailbox_t output_mailbox;
    rt_err_t (*put_message)(struct MessageHub *self, Messages_t message, rt_mailbox_t mb);
    Messages_t (*get_message)(struct MessageHub *self, rt_mailbox_t mb);
} MessageHub, *MessageHub_t;

/* Hub: a successful put hands the message to the receiver. */
MessageHub_t message_hub_create(void);
void message_hub_destroy(MessageHub_t hub);
rt_err_t message_hub_put(MessageHub_t hub, Messages_t message, rt_mailbox_t mb);
Messages_t message_hub_get(MessageHub_t hub, rt_mailbox_t mb);
Messages_t message_hub_get_timeout(MessageHub_t hub, rt_mailbox_t mb, rt_int32_t timeout);

/* Messages: everything lives on the RT-Thread heap. */
Messages_t messages_create(int max_size);
rt_err_t messages_append(Messages_t messages, MessageType message_type, const char *content);
void messages_destroy(Messages_t messages);
MessageType messages_get_type_idx(Messages_t messages, int idx);
char *messages_get_content_idx(Messages_t messages, int idx);
char *get_agent_content_type(MessageType message_type);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_MESSAGE_HUB_H__ */
