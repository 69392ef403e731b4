/*
 * Force-included (-include) into paho-mqtt's paho_mqtt_pipe.c for the host
 * build (tests only), so the file compiles unchanged:
 * - its open("/dev/MQTTn") of the pipe it just created goes to
 *   rt_host_pipe_open (pipe_host.c), which knows the pipes of rt_pipe_create;
 *   <fcntl.h> is included first, so its own declaration of open() keeps the
 *   libc name;
 * - closesocket() is SAL's name (RT-Thread's sys/socket.h); Linux closes a
 *   socket with close().
 */
#ifndef RT_HOST_TEST_PAHO_HOST_H__
#define RT_HOST_TEST_PAHO_HOST_H__

#include <fcntl.h>
#include <unistd.h>
#include <rtdevice.h>

#define open rt_host_pipe_open
#define closesocket close

#endif
