/*
 * MessageHub across real threads: ownership on put, blocking and timed get,
 * the NULL sentinel, a full mailbox, and destroy draining what is queued.
 */
#include <rtthread.h>
#include <rt_host.h>
#include "MessageHub.h"
#include "check.h"

static Messages_t text_message(const char *text)
{
    Messages_t m = messages_create(1);
    messages_append(m, TYPE_TEXT, text);
    return m;
}

struct echo_args
{
    MessageHub_t hub;
    rt_sem_t done;
    int echoed;
};

/* A channel-like worker: takes from input (blocking), answers on output,
 * and stops at the NULL sentinel. */
static void echo_thread(void *parameter)
{
    struct echo_args *args = parameter;
    for (;;)
    {
        Messages_t in = message_hub_get(args->hub, args->hub->input_mailbox);
        if (!in)
            break;
        char reply[64];
        rt_snprintf(reply, sizeof(reply), "echo: %s", messages_get_content_idx(in, 0));
        messages_destroy(in); /* the receiver owns what it got */
        if (message_hub_put(args->hub, text_message(reply), args->hub->output_mailbox) == RT_EOK)
            args->echoed++;
    }
    rt_sem_release(args->done);
}

static void threads(void)
{
    MessageHub_t hub = message_hub_create();
    CHECK(hub && hub->input_mailbox && hub->output_mailbox && hub->put_message && hub->get_message);

    struct echo_args args = {hub, rt_sem_create("done", 0, RT_IPC_FLAG_FIFO), 0};
    rt_thread_t worker = rt_thread_create("echo", echo_thread, &args, 4096, 10, 10);
    CHECK(worker != RT_NULL);
    CHECK(rt_thread_startup(worker) == RT_EOK);

    /* Nothing yet: a timed get gives up after (at least) its timeout. */
    rt_tick_t start = rt_tick_get();
    CHECK(message_hub_get_timeout(hub, hub->output_mailbox, 50) == RT_NULL);
    CHECK(rt_tick_get() - start >= 50);

    const char *questions[] = {"one", "two", "three"};
    for (int i = 0; i < 3; i++)
        CHECK(message_hub_put(hub, text_message(questions[i]), hub->input_mailbox) == RT_EOK);
    const char *answers[] = {"echo: one", "echo: two", "echo: three"};
    for (int i = 0; i < 3; i++)
    {
        Messages_t reply = message_hub_get_timeout(hub, hub->output_mailbox, RT_WAITING_FOREVER);
        CHECK(reply != RT_NULL);
        CHECK_STR(messages_get_content_idx(reply, 0), answers[i]);
        messages_destroy(reply);
    }

    /* The NULL sentinel wakes the blocked worker, which stops. */
    CHECK(rt_mb_send(hub->input_mailbox, 0) == RT_EOK);
    CHECK(rt_sem_take(args.done, 5000) == RT_EOK);
    CHECK(args.echoed == 3);
    rt_sem_delete(args.done);

    /* A NULL sentinel on a timed get is "nothing" too. */
    CHECK(rt_mb_send(hub->output_mailbox, 0) == RT_EOK);
    CHECK(message_hub_get_timeout(hub, hub->output_mailbox, 100) == RT_NULL);
    message_hub_destroy(hub);
}

static void arguments_and_full_mailbox(void)
{
    MessageHub_t hub = message_hub_create();
    Messages_t m = text_message("x");
    CHECK(message_hub_put(RT_NULL, m, RT_NULL) == -RT_ERROR);
    CHECK(message_hub_put(hub, RT_NULL, hub->input_mailbox) == -RT_ERROR);
    CHECK(message_hub_put(hub, m, RT_NULL) == -RT_ERROR);
    CHECK(hub->put_message(RT_NULL, m, hub->input_mailbox) == -RT_ERROR);
    CHECK(message_hub_get(RT_NULL, hub->input_mailbox) == RT_NULL);
    CHECK(message_hub_get_timeout(RT_NULL, hub->input_mailbox, 10) == RT_NULL);
    CHECK(message_hub_get_timeout(hub, RT_NULL, 10) == RT_NULL);
    messages_destroy(m);

    for (int i = 0; i < MESSAGE_HUB_INPUT_MAILBOX_SIZE; i++)
        CHECK(message_hub_put(hub, text_message("fill"), hub->input_mailbox) == RT_EOK);
    Messages_t extra = text_message("extra");
    CHECK(message_hub_put(hub, extra, hub->input_mailbox) == -RT_EFULL);
    messages_destroy(extra); /* refused: still the sender's */
    message_hub_destroy(hub);
    message_hub_destroy(RT_NULL);
}

static void destroy_drains(void)
{
    rt_size_t before = heap_used();
    MessageHub_t hub = message_hub_create();
    for (int i = 0; i < 5; i++)
        CHECK(message_hub_put(hub, text_message("queued in"), hub->input_mailbox) == RT_EOK);
    for (int i = 0; i < 3; i++)
        CHECK(message_hub_put(hub, text_message("queued out"), hub->output_mailbox) == RT_EOK);
    CHECK(rt_mb_send(hub->output_mailbox, 0) == RT_EOK); /* a sentinel among them */
    message_hub_destroy(hub);
    CHECK(heap_used() == before);
}

static void creation_failures(void)
{
    rt_size_t before = heap_used();
    for (long n = 0; n < 8; n++)
    {
        rt_host_heap_fail_after(n);
        MessageHub_t hub = message_hub_create();
        rt_host_heap_fail_after(-1);
        if (hub)
            message_hub_destroy(hub);
        CHECK(heap_used() == before);
    }
}

int main(void)
{
    threads();
    arguments_and_full_mailbox();
    destroy_drains();
    creation_failures();
    return CHECK_DONE();
}
