/*
 * The Pico port's one network connection on lwIP's raw altcp API (NO_SYS: every callback runs
 * inside cyw43_arch_poll, in the main loop): DNS (names and IPv4 numbers), TCP, then TLS through
 * altcp_tls (pico_tls.c) for wss://. Received pbufs wait in a queue until the core reads them, and
 * the TCP window opens again only for what it read.
 */
#include <stdio.h>
#include <string.h>

#include "hardware/watchdog.h"
#include "lwip/altcp.h"
#include "lwip/altcp_tcp.h"
#include "lwip/dns.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "pico/time.h"
#include "pico_net_parts.h"
#include "pico_port.h"
#include "sdk_port.h"

#define HOST_MAX 255u
/* The pcb's poll interval in TCP slow-timer ticks (0.5 s): lets altcp_tls retry decrypting what is
 * waiting when pbufs ran short. */
#define POLL_TICKS 2u
/* Received bytes wait here until the core reads them: at most a TCP window's worth (the window
 * reopens only for what the core read), and the pbufs go back to the pool at once, so a core busy
 * sending cannot starve the driver of receive buffers. */
#define RX_RING_BYTES TCP_WND
/* A TLS handshake runs inside lwIP's receive callback and can take seconds on a Cortex-M0+; the
 * watchdog is fed from a timer meanwhile, for at most this long. */
#define HANDSHAKE_FEED_MS 20000u

typedef enum { NET_IDLE, NET_WAIT_CLOCK, NET_RESOLVING, NET_CONNECTING, NET_READY, NET_CLOSED, NET_FAILED } net_state;

static struct {
  net_state state;
  bool tls;
  bool peer_closed; /* FIN seen (p == NULL): what is queued is still handed out */
  uintptr_t generation; /* the callbacks' arg: a late DNS answer or callback of an old connection is ignored */
  struct altcp_pcb *pcb;
  size_t rx_head; /* the first unread byte in rx_ring */
  size_t rx_count;
  uint16_t port;
  char host[HOST_MAX + 1];
} net = {.state = NET_IDLE};
static uint8_t rx_ring[RX_RING_BYTES];
static repeating_timer_t feeder;
static bool feeding;
static uint64_t feed_until_ms;

static bool feed_watchdog(repeating_timer_t *timer) {
  (void)timer;
  if (time_us_64() / 1000u >= feed_until_ms) {
    feeding = false;
    return false;
  }
  watchdog_update();
  return true;
}

static void start_feeding(void) {
  feed_until_ms = time_us_64() / 1000u + HANDSHAKE_FEED_MS;
  if (!feeding) feeding = add_repeating_timer_ms(1000, feed_watchdog, NULL, &feeder);
}

static void stop_feeding(void) {
  if (feeding) cancel_repeating_timer(&feeder);
  feeding = false;
}

static void log_host(int level, const char *what, const char *detail) {
  char line[HOST_MAX + 512];
  snprintf(line, sizeof line, "%s %s port %u%s%s", what, net.host, (unsigned)net.port, detail[0] != '\0' ? ": " : "",
           detail);
  sdk_port_log(level, line);
}

static bool current(void *arg) { return (uintptr_t)arg == net.generation; }

static void drop_queue(void) {
  net.rx_head = 0;
  net.rx_count = 0;
}

/* Tells TCP the queued bytes were taken: closing with unread data would send a RST and drop what we
 * still had to send (the close frame). */
static void release_unread(struct altcp_pcb *pcb) {
  for (size_t left = net.rx_count; left > 0;) {
    uint16_t part = left > 0xFFFFu ? 0xFFFFu : (uint16_t)left;
    altcp_recved(pcb, part);
    left -= part;
  }
  drop_queue();
}

/* Detaches our callbacks and lets the pcb go: closed (queued data still sent), else aborted. */
static void release_pcb(bool graceful) {
  struct altcp_pcb *pcb = net.pcb;
  net.pcb = NULL;
  if (pcb == NULL) return;
  altcp_arg(pcb, NULL);
  altcp_recv(pcb, NULL);
  altcp_sent(pcb, NULL);
  altcp_err(pcb, NULL);
  altcp_poll(pcb, NULL, POLL_TICKS);
  if (graceful) {
    release_unread(pcb);
    if (net.tls) pico_tls_close_notify(pcb);
    if (altcp_close(pcb) == ERR_OK) return;
  }
  altcp_abort(pcb);
}

static void end(net_state state, bool graceful) {
  stop_feeding();
  net.generation++;
  release_pcb(graceful);
  drop_queue();
  net.peer_closed = false;
  net.state = state;
}

static const char *err_text(err_t err) {
  switch (err) {
    case ERR_RST: return "refused or reset by the server";
    case ERR_ABRT: return "timed out or aborted";
    case ERR_CLSD: return "closed";
    case ERR_TIMEOUT: return "timed out";
    case ERR_MEM: return "out of memory";
    case ERR_RTE: return "no route";
    default: return "failed";
  }
}

/* The pcb is gone (lwIP frees it after this returns): never touch it again. */
static void on_err(void *arg, err_t err) {
  if (!current(arg)) return;
  stop_feeding();
  struct altcp_pcb *pcb = net.pcb;
  net.pcb = NULL;
  if (net.state == NET_READY) {
    log_host(SDK_LOG_WARN, "connection to", err_text(err));
    net.state = NET_CLOSED;
    return;
  }
  if (net.tls && err == ERR_CLSD) {
    pico_tls_log_failure(pcb, net.host);
  } else {
    log_host(SDK_LOG_ERROR, "cannot connect to", err_text(err));
  }
  net.generation++;
  drop_queue();
  net.state = NET_FAILED;
}

static err_t on_recv(void *arg, struct altcp_pcb *pcb, struct pbuf *p, err_t err) {
  (void)pcb;
  if (!current(arg)) {
    if (p != NULL) pbuf_free(p);
    return ERR_OK;
  }
  if (p == NULL) {
    net.peer_closed = true;
    return ERR_OK;
  }
  if (err != ERR_OK) {
    pbuf_free(p);
    return ERR_OK;
  }
  if (p->tot_len > RX_RING_BYTES - net.rx_count) return ERR_MEM; /* lwIP keeps it and offers it again */
  size_t tail = (net.rx_head + net.rx_count) % RX_RING_BYTES;
  size_t first = RX_RING_BYTES - tail < p->tot_len ? RX_RING_BYTES - tail : p->tot_len;
  pbuf_copy_partial(p, rx_ring + tail, (uint16_t)first, 0);
  if (first < p->tot_len) pbuf_copy_partial(p, rx_ring, (uint16_t)(p->tot_len - first), (uint16_t)first);
  net.rx_count += p->tot_len;
  pbuf_free(p);
  return ERR_OK;
}

static err_t on_poll(void *arg, struct altcp_pcb *pcb) {
  (void)arg;
  (void)pcb;
  return ERR_OK;
}

static err_t on_connected(void *arg, struct altcp_pcb *pcb, err_t err) {
  if (!current(arg)) return ERR_OK;
  if (err != ERR_OK) return ERR_OK; /* on_err follows */
  stop_feeding();
  if (net.tls && !pico_tls_verified(pcb)) {
    log_host(SDK_LOG_ERROR, "refusing", "the server's certificate was not verified");
    net.pcb = NULL;
    net.generation++;
    drop_queue();
    net.state = NET_FAILED;
    altcp_abort(pcb);
    return ERR_ABRT;
  }
  net.state = NET_READY;
  if (net.tls) {
    char how[160];
    pico_tls_describe(pcb, how, sizeof how);
    log_host(SDK_LOG_INFO, "connected to", how);
  } else {
    log_host(SDK_LOG_INFO, "connected to", "");
  }
  return ERR_OK;
}

static void connect_to(const ip_addr_t *address) {
  struct altcp_pcb *pcb = net.tls ? pico_tls_new(net.host) : altcp_tcp_new_ip_type(IPADDR_TYPE_V4);
  if (pcb == NULL) {
    if (!net.tls) log_host(SDK_LOG_ERROR, "cannot connect to", "no memory for a TCP connection");
    end(NET_FAILED, false);
    return;
  }
  net.pcb = pcb;
  altcp_arg(pcb, (void *)net.generation);
  altcp_recv(pcb, on_recv);
  altcp_err(pcb, on_err);
  altcp_poll(pcb, on_poll, POLL_TICKS);
  altcp_nagle_disable(pcb);
  net.state = NET_CONNECTING;
  if (net.tls) start_feeding();
  err_t err = altcp_connect(pcb, address, net.port, on_connected);
  if (err != ERR_OK) {
    log_host(SDK_LOG_ERROR, "cannot connect to", err_text(err));
    end(NET_FAILED, false);
  }
}

static void on_resolved(const char *name, const ip_addr_t *address, void *arg) {
  (void)name;
  if (!current(arg) || net.state != NET_RESOLVING) return;
  if (address == NULL) {
    log_host(SDK_LOG_ERROR, "cannot resolve", "no answer from DNS");
    end(NET_FAILED, false);
    return;
  }
  connect_to(address);
}

static void resolve(void) {
  ip_addr_t address;
  net.state = NET_RESOLVING;
  err_t err = dns_gethostbyname(net.host, &address, on_resolved, (void *)net.generation);
  if (err == ERR_OK) {
    connect_to(&address);
  } else if (err != ERR_INPROGRESS) {
    log_host(SDK_LOG_ERROR, "cannot resolve", err == ERR_ARG ? "not a usable name" : err_text(err));
    end(NET_FAILED, false);
  }
}

bool sdk_port_net_open(const char *host, uint16_t port, bool tls) {
  sdk_port_net_close();
  size_t len = host != NULL ? strlen(host) : 0;
  if (len == 0 || len > HOST_MAX) {
    sdk_port_log(SDK_LOG_ERROR, "cannot connect: the host name is empty or too long");
    return false;
  }
  if (!pico_wifi_up()) {
    sdk_port_log(SDK_LOG_INFO, "not connecting yet: Wi-Fi is not up");
    return false;
  }
  memcpy(net.host, host, len + 1);
  net.port = port;
  net.tls = tls;
  if (tls && !pico_tls_trusted()) {
    log_host(SDK_LOG_ERROR, "refusing wss:// to", "no usable CA certificate or key pin in the config block");
    return false;
  }
  pico_clock_start();
  net.generation++;
  net.peer_closed = false;
  if (tls && pico_clock_worth_waiting()) {
    net.state = NET_WAIT_CLOCK;
  } else {
    resolve();
  }
  return true;
}

sdk_net_status sdk_port_net_status(void) {
  if (net.state == NET_WAIT_CLOCK && !pico_clock_worth_waiting()) resolve();
  switch (net.state) {
    case NET_WAIT_CLOCK:
    case NET_RESOLVING:
    case NET_CONNECTING: return SDK_NET_CONNECTING;
    case NET_READY: return net.peer_closed && net.rx_count == 0 ? SDK_NET_CLOSED : SDK_NET_READY;
    case NET_FAILED: return SDK_NET_FAILED;
    case NET_IDLE:
    case NET_CLOSED: break;
  }
  return SDK_NET_CLOSED;
}

static bool connecting(void) {
  return net.state == NET_WAIT_CLOCK || net.state == NET_RESOLVING || net.state == NET_CONNECTING;
}

long sdk_port_net_send(const uint8_t *data, size_t len) {
  if (connecting()) return 0;
  if (net.state != NET_READY || net.pcb == NULL) return -1;
  size_t n = len;
  uint16_t room = altcp_sndbuf(net.pcb);
  if (n > room) n = room;
  /* One altcp_write must fit one TLS record (altcp_tls asserts otherwise). */
  if (net.tls) {
    uint16_t record = pico_tls_max_write(net.pcb);
    if (n > record) n = record;
  }
  if (n == 0) return 0;
  err_t err = altcp_write(net.pcb, data, (uint16_t)n, TCP_WRITE_FLAG_COPY);
  if (err == ERR_MEM) return 0;
  if (err == ERR_OK) err = altcp_output(net.pcb);
  if (err != ERR_OK) {
    log_host(SDK_LOG_WARN, "send to", err_text(err));
    end(NET_CLOSED, false);
    return -1;
  }
  return (long)n;
}

long sdk_port_net_recv(uint8_t *out, size_t cap) {
  if (connecting()) return 0;
  size_t got = 0;
  while (net.rx_count > 0 && got < cap) {
    size_t n = RX_RING_BYTES - net.rx_head;
    if (n > net.rx_count) n = net.rx_count;
    if (n > cap - got) n = cap - got;
    memcpy(out + got, rx_ring + net.rx_head, n);
    got += n;
    net.rx_head = (net.rx_head + n) % RX_RING_BYTES;
    net.rx_count -= n;
  }
  if (got > 0) {
    for (size_t left = got; net.pcb != NULL && left > 0;) {
      uint16_t part = left > 0xFFFFu ? 0xFFFFu : (uint16_t)left;
      altcp_recved(net.pcb, part);
      left -= part;
    }
    return (long)got;
  }
  if (net.state == NET_READY && !net.peer_closed && net.pcb != NULL) return 0;
  if (net.state == NET_READY) {
    log_host(SDK_LOG_INFO, "connection closed by", "");
    end(NET_CLOSED, true);
  }
  return -1;
}

void sdk_port_net_close(void) {
  if (net.state == NET_IDLE || net.state == NET_CLOSED || net.state == NET_FAILED) {
    end(NET_CLOSED, false);
    return;
  }
  end(NET_CLOSED, true);
}

void pico_net_link_down(void) {
  if (net.state == NET_IDLE || net.state == NET_CLOSED || net.state == NET_FAILED) return;
  log_host(SDK_LOG_WARN, "Wi-Fi lost: dropping the connection to", "");
  end(NET_CLOSED, false);
}

bool pico_net_init(const sdk_config *config) { return pico_tls_init(config); }
