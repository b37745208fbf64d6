// The records in a file of the harness's format (kernellab/record.hpp), for attacks that read them back.
/** Each record of the file at `path`: its header (JSON text) and payload. */
std::vector<std::pair<std::string, std::string>> readRecords(const char* path) {
    std::vector<std::pair<std::string, std::string>> records;
    std::FILE* file = std::fopen(path, "rb");
    if (file == nullptr) { return records; }
    char magic[4];
    uint32_t header_size;
    uint64_t payload_size;
    while (std::fread(magic, 1, 4, file) == 4 && std::fread(&header_size, 4, 1, file) == 1) {
        std::string header(header_size, '\0'), payload;
        if (std::fread(&header[0], 1, header_size, file) != header_size || std::fread(&payload_size, 8, 1, file) != 1) { break; }
        payload.resize(payload_size);
        if (payload_size && std::fread(&payload[0], 1, payload_size, file) != payload_size) { break; }
        records.emplace_back(header, payload);
    }
    std::fclose(file);
    return records;
}
