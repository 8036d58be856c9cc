/// Placeholder until the URLSession transport lands.
enum CourierURLSessionPlaceholder {}
