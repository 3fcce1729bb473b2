/*
 * The host port's network (sdk_port_net_* in sdk_port.h) over POSIX sockets, with TLS by mbedtls,
 * plus what main needs to wait in poll() and to configure trust.
 *
 * One connection at a time. sdk_port_net_open resolves the name (getaddrinfo: blocking, IPv6 and
 * IPv4, each address tried in turn, 5 s each) and starts a non-blocking connect; every call to
 * sdk_port_net_status advances the TCP connect and then the TLS handshake. A name that does not
 * resolve, or no address that accepts, gives SDK_NET_FAILED with a log line.
 *
 * TLS: TLS 1.2 at least (mbedtls 2.28 has no TLS 1.3 client; 3.6 negotiates 1.3 when enabled),
 * ECDHE-ECDSA and ECDHE-RSA with AES-GCM (and ChaCha20-Poly1305 when the library has it), the
 * server's name always checked (and sent as SNI). Our code uses static memory only; mbedtls
 * allocates its record buffers and parsed certificates with its own allocator.
 */
#ifndef HOST_NET_H
#define HOST_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What TLS connections trust, for the next connection (false, changing nothing, while one is open).
 * ca_der: one X.509 certificate (DER) the server's chain must lead to; NULL or 0 for none.
 * key_pin32: the SHA-256 of the server certificate's SubjectPublicKeyInfo (DER); NULL for none.
 * Only a pin: the chain is not checked, the leaf's key must match. Both: both must hold.
 * Neither: a TLS connection is refused (never unauthenticated). false when ca_der does not parse.
 */
bool host_net_set_trust(const uint8_t *ca_der, size_t ca_len, const uint8_t *key_pin32);

/* The socket to poll() while a connection is open, else -1. */
int host_net_fd(void);
/* Whether to poll for POLLOUT too (connect in progress, TLS or a send waiting for room). */
bool host_net_wants_write(void);
/* Whether received bytes are already buffered (decrypted by TLS) so poll() would not report
 * them: then call sdk_port_net_recv without waiting. */
bool host_net_has_buffered_input(void);

#endif /* HOST_NET_H */
