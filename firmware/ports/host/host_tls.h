/* TLS for host_net.c: mbedtls on a connected non-blocking socket. Internal to ports/host. */
#ifndef HOST_TLS_H
#define HOST_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { HOST_TLS_DONE = 0, HOST_TLS_AGAIN = 1, HOST_TLS_FAILED = -1 } host_tls_result;

/* Whether a CA or a key pin is configured (TLS without one is refused). */
bool host_tls_trusted(void);
/* Sets up a session on fd for host (SNI and name check); false (logged) when it cannot. */
bool host_tls_begin(int fd, const char *host);
/* Runs the handshake as far as the socket allows; a failure is logged with its reason. */
host_tls_result host_tls_handshake(void);
/* As sdk_port_net_send / sdk_port_net_recv. */
long host_tls_send(const uint8_t *data, size_t len);
long host_tls_recv(uint8_t *out, size_t cap);
/* Sends what an earlier send left queued; false when the connection broke. */
bool host_tls_flush(void);
bool host_tls_wants_write(void);
bool host_tls_has_buffered_input(void);
/* Ends the session (graceful: flush and close_notify, best effort). The socket stays open. */
void host_tls_end(bool graceful);

#endif /* HOST_TLS_H */
