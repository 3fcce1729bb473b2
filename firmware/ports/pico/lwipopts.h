/* lwIP for the sdk firmware: raw API, one event loop (NO_SYS, cyw43 "poll" architecture), one
 * TCP connection (plain or TLS through altcp + mbedtls), DHCP, DNS, SNTP. */
#ifndef SDK_LWIPOPTS_H
#define SDK_LWIPOPTS_H

#define NO_SYS 1
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
#define MEM_LIBC_MALLOC 0
#define MEM_ALIGNMENT 4
#define MEM_SIZE 8192
#define MEMP_NUM_TCP_SEG 32
#define MEMP_NUM_ARP_QUEUE 10
#define MEMP_NUM_SYS_TIMEOUT (LWIP_NUM_SYS_TIMEOUT_INTERNAL + 2)
#define PBUF_POOL_SIZE 24
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
#define LWIP_RAW 1
#define TCP_MSS 1460
#define TCP_WND (16 * TCP_MSS) /* ≥ the 16 KB TLS record the server may send */
#define TCP_SND_BUF (8 * TCP_MSS)
#define TCP_SND_QUEUELEN ((4 * (TCP_SND_BUF) + (TCP_MSS - 1)) / (TCP_MSS))
#define LWIP_NETIF_STATUS_CALLBACK 1
#define LWIP_NETIF_LINK_CALLBACK 1
#define LWIP_NETIF_HOSTNAME 1
#define LWIP_NETIF_TX_SINGLE_PBUF 1
#define DHCP_DOES_ARP_CHECK 0
#define LWIP_DHCP_DOES_ACD_CHECK 0
#define LWIP_DHCP 1
#define LWIP_IPV4 1
#define LWIP_TCP 1
#define LWIP_UDP 1
#define LWIP_DNS 1
#define LWIP_TCP_KEEPALIVE 1
#define LWIP_CHKSUM_ALGORITHM 3
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

/* SNTP: a clock for certificate dates (docs/firmware.md, "The Pico build"). */
#define SNTP_SERVER_DNS 1
#define SNTP_GET_SERVERS_FROM_DHCP 1
#define SNTP_MAX_SERVERS 2
void sdk_pico_clock_set(unsigned long long seconds, unsigned long microseconds);
#define SNTP_SET_SYSTEM_TIME_US(sec, us) sdk_pico_clock_set((unsigned long long)(sec), (unsigned long)(us))
#define SNTP_STARTUP_DELAY 0

#ifndef NDEBUG
#define LWIP_DEBUG 1
#endif
#define ALTCP_MBEDTLS_DEBUG LWIP_DBG_OFF

#endif /* SDK_LWIPOPTS_H */
