/* lwIP for the sdk firmware: raw API, one event loop (NO_SYS, cyw43 "poll" architecture), one
 * TCP connection (plain or TLS through altcp + mbedtls), DHCP, DNS, SNTP. */
#ifndef SDK_LWIPOPTS_H
#define SDK_LWIPOPTS_H

#include <stdint.h>

#define NO_SYS 1
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
#define MEM_LIBC_MALLOC 0
#define MEM_ALIGNMENT 4
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
/* Flash is tight (docs/firmware.md): no IP fragments, no out-of-order TCP queue. */
#define IP_REASSEMBLY 0
#define IP_FRAG 0
#define TCP_QUEUE_OOSEQ 0
#define LWIP_RAW 0
#define LWIP_IPV4 1
#define LWIP_TCP 1
#define LWIP_UDP 1
#define LWIP_DNS 1
#define LWIP_DHCP 1
#define DHCP_DOES_ARP_CHECK 0
#define LWIP_DHCP_DOES_ACD_CHECK 0
#define LWIP_TCP_KEEPALIVE 1
#define LWIP_CHKSUM_ALGORITHM 3
#define LWIP_NETIF_STATUS_CALLBACK 1
#define LWIP_NETIF_LINK_CALLBACK 1
#define LWIP_NETIF_HOSTNAME 1
#define LWIP_NETIF_TX_SINGLE_PBUF 1

/* TCP. The window holds a whole 16 KB TLS record (mbedtls decrypts only complete records, and the
 * window opens again only as the core reads): 16 × 1460 = 23360 > 16384 + record overhead. */
#define TCP_MSS 1460
#define TCP_WND (16 * TCP_MSS)
#define TCP_SND_BUF (8 * TCP_MSS)
#define TCP_SND_QUEUELEN ((4 * (TCP_SND_BUF) + (TCP_MSS - 1)) / (TCP_MSS))
#define MEMP_NUM_TCP_SEG TCP_SND_QUEUELEN
/* The one live connection, plus closed ones lingering in TIME_WAIT/FIN_WAIT after reconnects. */
#define MEMP_NUM_TCP_PCB 6
#define MEMP_NUM_ARP_QUEUE 10

/* Received frames land in the pool (cyw43 allocates a pool pbuf per frame) and stay there until
 * the core reads them: a full window is 16 of them; altcp_tls also puts each decrypted record in
 * its own pool pbuf. */
#define PBUF_POOL_SIZE 24

/* lwIP's own heap: outgoing TCP data (TCP_WRITE_FLAG_COPY, up to TCP_SND_BUF), the altcp_tls
 * config, its entropy/DRBG state and the per-connection altcp_tls state (mbedtls's 16 KB + 4 KB
 * record buffers come from the C heap: MBEDTLS_PLATFORM_MEMORY is off). */
#define MEM_SIZE (TCP_SND_BUF + 8192)

/* DHCP, DNS, SNTP, and altcp_tls's poll retry. */
#define MEMP_NUM_SYS_TIMEOUT (LWIP_NUM_SYS_TIMEOUT_INTERNAL + 2)

#define LWIP_STATS 0
#define LWIP_STATS_DISPLAY 0
#define MEM_STATS 0
#define SYS_STATS 0
#define MEMP_STATS 0
#define LINK_STATS 0

/* TLS through altcp (lwIP's own default verifies only optionally: CMake sets REQUIRED). */
#define LWIP_ALTCP 1
#define LWIP_ALTCP_TLS 1
#define LWIP_ALTCP_TLS_MBEDTLS 1

/* SNTP: a clock for certificate dates (pico_clock.c). DHCP asks for an NTP server, and
 * pico_clock.c's dhcp_set_ntp_servers puts it first, ahead of pool.ntp.org (lwIP's
 * SNTP_GET_SERVERS_FROM_DHCP would clear the fallback). */
#define LWIP_DHCP_GET_NTP_SRV 1
#define LWIP_DHCP_MAX_NTP_SERVERS 1
#define SNTP_GET_SERVERS_FROM_DHCP 0
#define SNTP_SERVER_DNS 1
#define SNTP_MAX_SERVERS 2
#define SNTP_STARTUP_DELAY 0
#define SNTP_RECV_TIMEOUT 5000
#define SNTP_CHECK_RESPONSE 2
void sdk_pico_clock_set(unsigned long long seconds, unsigned long microseconds);
void sdk_pico_clock_get(uint32_t *seconds, uint32_t *microseconds);
#define SNTP_SET_SYSTEM_TIME_US(sec, us) sdk_pico_clock_set((unsigned long long)(sec), (unsigned long)(us))
#define SNTP_GET_SYSTEM_TIME(sec, us) sdk_pico_clock_get(&(sec), &(us))

#ifndef NDEBUG
#define LWIP_DEBUG 1
#endif
#define ALTCP_MBEDTLS_DEBUG LWIP_DBG_OFF

#endif /* SDK_LWIPOPTS_H */
