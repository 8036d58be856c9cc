/// Placeholder until the embedded test server lands.
enum CourierTestServerPlaceholder {}
