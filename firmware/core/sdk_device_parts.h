/*
 * What the parts of the device share (sdk_device.c: the connection and the loop;
 * sdk_device_send.c: the send buffer and outgoing messages; sdk_device_events.c: watched pins and
 * UART input). Ports use sdk_device.h, not this.
 */
#ifndef SDK_DEVICE_PARTS_H
#define SDK_DEVICE_PARTS_H

#include "sdk_device.h"

/* ---------------- sdk_device_send.c */

bool sdk_device_tx_idle(const sdk_device *dev);
/* A writer over the payload area of the send buffer (room is kept in front for the header). */
void sdk_device_begin_frame(sdk_device *dev, sdk_json_writer *w);
/* Frames what the writer holds as a text message; false (logged) when it did not fit. */
bool sdk_device_queue_json(sdk_device *dev, const sdk_json_writer *w);
void sdk_device_queue_control(sdk_device *dev, uint8_t opcode, const uint8_t *data, size_t len);
void sdk_device_queue_close(sdk_device *dev, uint16_t code, const char *reason);
void sdk_device_queue_error(sdk_device *dev, bool has_id, int64_t id, const char *code, const char *message);
/* A close frame is queued: the connection ends once it is sent, or after a timeout. */
void sdk_device_begin_closing(sdk_device *dev, uint16_t code);
/* Sends what the network takes now; false when the connection broke. */
bool sdk_device_flush(sdk_device *dev);

/* ---------------- sdk_device_events.c */

/* Reports watched pins whose debounce time has passed. */
void sdk_device_settle_debounced(sdk_device *dev, uint64_t now);
/* Queues the next event message (gpio_change, then uart_rx); false when there is none. */
bool sdk_device_queue_next_event(sdk_device *dev);

#endif /* SDK_DEVICE_PARTS_H */
