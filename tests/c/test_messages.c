/*
 * Messages_t: growth by 5, copies, NULL and out-of-range arguments, and
 * allocation failures (injected in the host heap) that leave the array as it
 * was and leak nothing.
 */
#include <rtthread.h>
#include <rt_host.h>
#include "MessageHub.h"
#include "check.h"

static void growth_and_copies(void)
{
    Messages_t m = messages_create(0);
    CHECK(m != RT_NULL);
    CHECK(m->max_size == 0 && m->current_size == 0 && m->message_ptr == RT_NULL);

    char text[16];
    for (int i = 0; i < 12; i++)
    {
        rt_snprintf(text, sizeof(text), "msg %d", i);
        CHECK(messages_append(m, (MessageType)(i % 4), text) == RT_EOK);
        CHECK(m->current_size == i + 1);
        CHECK(m->max_size == ((i / 5) + 1) * 5); /* 5, 10, 15 */
    }
    text[0] = 'X'; /* the array holds copies */
    CHECK_STR(messages_get_content_idx(m, 0), "msg 0");
    CHECK_STR(messages_get_content_idx(m, 11), "msg 11");
    CHECK(messages_get_type_idx(m, 3) == TYPE_VIDEO);
    CHECK(messages_get_type_idx(m, 5) == TYPE_AUDIO);
    messages_destroy(m);

    Messages_t sized = messages_create(3);
    CHECK(sized && sized->max_size == 3 && sized->message_ptr != RT_NULL);
    for (int i = 0; i < 4; i++)
        CHECK(messages_append(sized, TYPE_TEXT, "x") == RT_EOK);
    CHECK(sized->max_size == 8);
    messages_destroy(sized);
}

static void null_and_range(void)
{
    Messages_t m = messages_create(1);
    CHECK(messages_append(RT_NULL, TYPE_TEXT, "a") == RT_ERROR);
    CHECK(messages_append(m, TYPE_TEXT, RT_NULL) == RT_ERROR);
    CHECK(m->current_size == 0);
    CHECK(messages_append(m, TYPE_IMAGE, "/sd/a.png") == RT_EOK);

    CHECK(messages_get_content_idx(RT_NULL, 0) == RT_NULL);
    CHECK(messages_get_content_idx(m, -1) == RT_NULL);
    CHECK(messages_get_content_idx(m, 1) == RT_NULL);
    CHECK(messages_get_content_idx(m, 1000000) == RT_NULL);
    CHECK(messages_get_type_idx(RT_NULL, 0) == TYPE_NULL);
    CHECK(messages_get_type_idx(m, -5) == TYPE_NULL);
    CHECK(messages_get_type_idx(m, 1) == TYPE_NULL);
    CHECK(messages_get_type_idx(m, 0) == TYPE_IMAGE);
    CHECK(messages_create(-1) == RT_NULL);
    messages_destroy(m);
    messages_destroy(RT_NULL);

    CHECK_STR(get_agent_content_type(TYPE_TEXT), "text");
    CHECK_STR(get_agent_content_type(TYPE_AUDIO), "audio_url");
    CHECK_STR(get_agent_content_type(TYPE_IMAGE), "image_url");
    CHECK_STR(get_agent_content_type(TYPE_VIDEO), "video_url");
    CHECK(get_agent_content_type(TYPE_NULL) != RT_NULL);
    CHECK(get_agent_content_type((MessageType)99) != RT_NULL);
    CHECK(get_agent_content_type((MessageType)-1) != RT_NULL);
}

static void allocation_failures(void)
{
    rt_size_t before = heap_used();

    /* messages_create: the struct fails, or the array after the struct. */
    rt_host_heap_fail_after(0);
    CHECK(messages_create(4) == RT_NULL);
    rt_host_heap_fail_after(1);
    CHECK(messages_create(4) == RT_NULL);
    rt_host_heap_fail_after(-1);
    CHECK(heap_used() == before);

    Messages_t m = messages_create(0);
    for (int i = 0; i < 5; i++)
        CHECK(messages_append(m, TYPE_TEXT, "full") == RT_EOK);
    MessageItem_t items = m->message_ptr;
    rt_size_t with_five = heap_used();

    /* The copy of the content fails. */
    rt_host_heap_fail_after(0);
    CHECK(messages_append(m, TYPE_TEXT, "sixth") == RT_ERROR);
    /* The copy succeeds, growing the array fails. */
    rt_host_heap_fail_after(1);
    CHECK(messages_append(m, TYPE_TEXT, "sixth") == RT_ERROR);
    rt_host_heap_fail_after(-1);

    CHECK(m->current_size == 5 && m->max_size == 5 && m->message_ptr == items);
    CHECK_STR(messages_get_content_idx(m, 4), "full");
    CHECK(heap_used() == with_five);

    CHECK(messages_append(m, TYPE_TEXT, "sixth") == RT_EOK);
    CHECK(m->max_size == 10);
    messages_destroy(m);
    CHECK(heap_used() == before);
}

/* Code written for the C package may free the parts with rt_free. */
static void freed_piecewise_with_rt_free(void)
{
    rt_size_t before = heap_used();
    Messages_t m = messages_create(2);
    messages_append(m, TYPE_TEXT, "one");
    messages_append(m, TYPE_TEXT, "two");
    for (int i = 0; i < m->current_size; i++)
        rt_free(m->message_ptr[i].content);
    rt_free(m->message_ptr);
    rt_free(m);
    CHECK(heap_used() == before);
}

int main(void)
{
    growth_and_copies();
    null_and_range();
    allocation_failures();
    freed_piecewise_with_rt_free();
    return CHECK_DONE();
}
