// Linked against the driver's stub on purpose: the binary check must reject it.
int main() { return 0; }
