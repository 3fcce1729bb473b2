/* The host port's one network connection: getaddrinfo, a non-blocking connect to each address in
 * turn, then TLS (host_tls.c) when asked. */
#include "host_net.h"

#include "host_tls.h"
#include "sdk_port.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_ADDRESSES 8u
#define CONNECT_TIMEOUT_MS 5000u

typedef enum { NET_IDLE, NET_TCP, NET_TLS, NET_READY, NET_CLOSED, NET_FAILED } net_state;

static struct {
  net_state state;
  int fd;
  bool tls;
  bool want_write;
  char host[256];
  uint16_t port;
  struct sockaddr_storage addresses[MAX_ADDRESSES];
  socklen_t address_lens[MAX_ADDRESSES];
  size_t address_count;
  size_t address_next;
  uint64_t attempt_ms;
  int last_error;
} net = {.state = NET_IDLE, .fd = -1};

static void log_host(int level, const char *what, const char *detail) {
  char line[512];
  (void)snprintf(line, sizeof line, "%s %s port %u%s%s", what, net.host, (unsigned)net.port,
                 detail[0] != '\0' ? ": " : "", detail);
  sdk_port_log(level, line);
}

static void address_text(size_t i, char *out, size_t cap) {
  const struct sockaddr *sa = (const struct sockaddr *)&net.addresses[i];
  const void *ip = sa->sa_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr
                                             : (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
  if (inet_ntop(sa->sa_family, ip, out, (socklen_t)cap) == NULL) (void)snprintf(out, cap, "?");
}

static void log_address_failure(size_t i, const char *why) {
  char ip[INET6_ADDRSTRLEN];
  address_text(i, ip, sizeof ip);
  char line[256];
  (void)snprintf(line, sizeof line, "connect to %s port %u: %s", ip, (unsigned)net.port, why);
  sdk_port_log(SDK_LOG_INFO, line);
}

static void close_socket(void) {
  if (net.fd >= 0 && close(net.fd) != 0) sdk_port_log(SDK_LOG_WARN, "close() on the socket failed");
  net.fd = -1;
}

static void end(net_state state) {
  host_tls_end(false);
  close_socket();
  net.want_write = false;
  net.state = state;
}

static bool make_non_blocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return false;
  int fd_flags = fcntl(fd, F_GETFD);
  return fd_flags >= 0 && fcntl(fd, F_SETFD, fd_flags | FD_CLOEXEC) == 0;
}

/* Starts a connect to the next address; none left: FAILED. */
static void connect_next(void) {
  close_socket();
  while (net.address_next < net.address_count) {
    size_t i = net.address_next++;
    const struct sockaddr *sa = (const struct sockaddr *)&net.addresses[i];
    int fd = socket(sa->sa_family, SOCK_STREAM, 0);
    if (fd < 0) {
      net.last_error = errno;
      log_address_failure(i, strerror(errno));
      continue;
    }
    int one = 1;
    if (!make_non_blocking(fd)) {
      net.last_error = errno;
      log_address_failure(i, "cannot make the socket non-blocking");
      if (close(fd) != 0) sdk_port_log(SDK_LOG_WARN, "close() on the socket failed");
      continue;
    }
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
      sdk_port_log(SDK_LOG_WARN, "TCP_NODELAY could not be set");
    if (connect(fd, sa, net.address_lens[i]) == 0 || errno == EINPROGRESS || errno == EINTR) {
      net.fd = fd;
      net.state = NET_TCP;
      net.attempt_ms = sdk_port_now_ms();
      return;
    }
    net.last_error = errno;
    log_address_failure(i, strerror(errno));
    if (close(fd) != 0) sdk_port_log(SDK_LOG_WARN, "close() on the socket failed");
  }
  log_host(SDK_LOG_ERROR, "cannot connect to", net.last_error != 0 ? strerror(net.last_error) : "no address");
  end(NET_FAILED);
}

bool sdk_port_net_open(const char *host, uint16_t port, bool tls) {
  sdk_port_net_close();
  size_t len = host != NULL ? strlen(host) : 0;
  if (len == 0 || len >= sizeof net.host) {
    sdk_port_log(SDK_LOG_ERROR, "cannot connect: the host name is empty or too long");
    return false;
  }
  memcpy(net.host, host, len + 1);
  net.port = port;
  net.tls = tls;
  net.want_write = false;
  net.last_error = 0;
  if (tls && !host_tls_trusted()) {
    log_host(SDK_LOG_ERROR, "refusing TLS to", "no CA certificate or key pin is configured");
    return false;
  }
  char service[8];
  (void)snprintf(service, sizeof service, "%u", (unsigned)port);
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  struct addrinfo *found = NULL;
  int rc = getaddrinfo(net.host, service, &hints, &found);
  if (rc != 0) {
    log_host(SDK_LOG_ERROR, "cannot resolve", gai_strerror(rc));
    net.state = NET_FAILED;
    return true;
  }
  net.address_count = 0;
  net.address_next = 0;
  for (const struct addrinfo *a = found; a != NULL && net.address_count < MAX_ADDRESSES; a = a->ai_next) {
    if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) || a->ai_addrlen > sizeof net.addresses[0]) continue;
    memcpy(&net.addresses[net.address_count], a->ai_addr, a->ai_addrlen);
    net.address_lens[net.address_count] = a->ai_addrlen;
    net.address_count++;
  }
  freeaddrinfo(found);
  connect_next();
  return true;
}

static void step_tls(void) {
  switch (host_tls_handshake()) {
    case HOST_TLS_DONE: net.state = NET_READY; break;
    case HOST_TLS_AGAIN: break;
    case HOST_TLS_FAILED: end(NET_FAILED); break;
  }
}

static void step_tcp(void) {
  struct pollfd p = {.fd = net.fd, .events = POLLOUT, .revents = 0};
  int ready = poll(&p, 1, 0);
  if (ready < 0 && errno != EINTR) {
    net.last_error = errno;
    log_address_failure(net.address_next - 1, strerror(errno));
    connect_next();
    return;
  }
  if (ready <= 0) {
    if (sdk_port_now_ms() - net.attempt_ms >= CONNECT_TIMEOUT_MS) {
      net.last_error = ETIMEDOUT;
      log_address_failure(net.address_next - 1, "timed out");
      connect_next();
    }
    return;
  }
  int error = 0;
  socklen_t error_len = sizeof error;
  if (getsockopt(net.fd, SOL_SOCKET, SO_ERROR, &error, &error_len) != 0) error = errno;
  if (error != 0) {
    net.last_error = error;
    log_address_failure(net.address_next - 1, strerror(error));
    connect_next();
    return;
  }
  if (!net.tls) {
    log_host(SDK_LOG_INFO, "connected to", "");
    net.state = NET_READY;
    return;
  }
  if (!host_tls_begin(net.fd, net.host)) {
    end(NET_FAILED);
    return;
  }
  net.state = NET_TLS;
  step_tls();
}

sdk_net_status sdk_port_net_status(void) {
  switch (net.state) {
    case NET_TCP: step_tcp(); break;
    case NET_TLS: step_tls(); break;
    case NET_READY:
      if (net.tls && !host_tls_flush()) end(NET_CLOSED);
      break;
    case NET_IDLE:
    case NET_CLOSED:
    case NET_FAILED: break;
  }
  switch (net.state) {
    case NET_TCP:
    case NET_TLS: return SDK_NET_CONNECTING;
    case NET_READY: return SDK_NET_READY;
    case NET_FAILED: return SDK_NET_FAILED;
    case NET_IDLE:
    case NET_CLOSED: break;
  }
  return SDK_NET_CLOSED;
}

static bool would_block(int error) { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

long sdk_port_net_send(const uint8_t *data, size_t len) {
  if (net.state == NET_TCP || net.state == NET_TLS) return 0;
  if (net.state != NET_READY) return -1;
  if (net.tls) {
    long sent = host_tls_send(data, len);
    if (sent < 0) end(NET_CLOSED);
    return sent;
  }
  if (len == 0) return 0;
  ssize_t sent = send(net.fd, data, len, MSG_NOSIGNAL);
  if (sent >= 0) {
    net.want_write = (size_t)sent < len;
    return (long)sent;
  }
  if (would_block(errno)) {
    net.want_write = true;
    return 0;
  }
  log_host(SDK_LOG_WARN, "send to", strerror(errno));
  end(NET_CLOSED);
  return -1;
}

long sdk_port_net_recv(uint8_t *out, size_t cap) {
  if (net.state == NET_TCP || net.state == NET_TLS) return 0;
  if (net.state != NET_READY) return -1;
  if (net.tls) {
    long got = host_tls_recv(out, cap);
    if (got < 0) end(NET_CLOSED);
    return got;
  }
  if (cap == 0) return 0;
  ssize_t got = recv(net.fd, out, cap, 0);
  if (got > 0) return (long)got;
  if (got < 0 && would_block(errno)) return 0;
  log_host(SDK_LOG_INFO, "connection closed by", got == 0 ? "" : strerror(errno));
  end(NET_CLOSED);
  return -1;
}

void sdk_port_net_close(void) {
  if (net.state == NET_IDLE || net.state == NET_CLOSED || net.state == NET_FAILED) {
    net.state = NET_CLOSED;
    return;
  }
  host_tls_end(net.state == NET_READY);
  end(NET_CLOSED);
}

int host_net_fd(void) {
  return net.state == NET_TCP || net.state == NET_TLS || net.state == NET_READY ? net.fd : -1;
}

bool host_net_wants_write(void) {
  switch (net.state) {
    case NET_TCP: return true;
    case NET_TLS: return host_tls_wants_write();
    case NET_READY: return net.tls ? host_tls_wants_write() : net.want_write;
    case NET_IDLE:
    case NET_CLOSED:
    case NET_FAILED: break;
  }
  return false;
}

bool host_net_has_buffered_input(void) { return net.state == NET_READY && net.tls && host_tls_has_buffered_input(); }
