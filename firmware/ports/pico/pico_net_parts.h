/* What pico_net.c, pico_tls.c and pico_clock.c tell each other (pico_port.h is what the rest of the
 * port sees). */
#ifndef SDK_PICO_NET_PARTS_H
#define SDK_PICO_NET_PARTS_H

#include <stdbool.h>
#include <stdint.h>

#include "lwip/altcp.h"
#include "sdk_config.h"

/* pico_clock.c: SNTP is started once, when the first connection is opened with Wi-Fi up. */
void pico_clock_start(void);
/* Whether a TLS connection should wait a little for SNTP (started, no answer yet, not for long). */
bool pico_clock_worth_waiting(void);
/* Installs the clock as mbedtls's time source. */
void pico_clock_attach_mbedtls(void);

/* pico_tls.c */
bool pico_tls_init(const sdk_config *config);
bool pico_tls_trusted(void);
/* A TLS pcb for host (SNI and name check, verification callback); NULL with a log line. */
struct altcp_pcb *pico_tls_new(const char *host);
/* The most a single altcp_write may carry on this pcb (one TLS record). */
uint16_t pico_tls_max_write(struct altcp_pcb *pcb);
/* A log line for a TLS connection that failed during the handshake; call from the err callback
 * (the pcb's TLS state is still there then). */
void pico_tls_log_failure(struct altcp_pcb *pcb, const char *host);
/* "TLSv1.3, TLS1-3-AES-128-GCM-SHA256" into out. */
void pico_tls_describe(struct altcp_pcb *pcb, char *out, size_t cap);
/* Sends a close_notify alert when the handshake is done (best effort, before altcp_close). */
void pico_tls_close_notify(struct altcp_pcb *pcb);

/* The handshake verified the server (a second check after the verify callback). */
bool pico_tls_verified(struct altcp_pcb *pcb);

#endif /* SDK_PICO_NET_PARTS_H */
