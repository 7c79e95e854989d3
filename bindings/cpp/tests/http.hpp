// A few lines of HTTP/1.1 over a POSIX socket for the C++ tests that play
// an MCP client by hand (test_input) or a user's browser (test_mcp's
// OAuth). POSIX only: the C++ tests run on Linux alone (the C tests are the
// ones built for Windows and i686).
#ifndef CAPSTAN_TEST_HTTP_HPP
#define CAPSTAN_TEST_HTTP_HPP

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace http {

struct Answer {
    int status = 0;        ///< 0: no answer
    std::string head;      ///< status line and headers, as sent
    std::string body;      ///< de-chunked
};

/// "http://127.0.0.1:PORT/path" -> {"127.0.0.1", PORT, "/path"}; port 0 if not of that form.
struct Target {
    std::string host;
    int port = 0;
    std::string path;
};

inline Target parse(const std::string &url) {
    Target t;
    const std::string scheme = "http://";
    if (url.rfind(scheme, 0) != 0) return t;
    std::size_t colon = url.find(':', scheme.size());
    std::size_t slash = url.find('/', scheme.size());
    if (colon == std::string::npos || (slash != std::string::npos && colon > slash)) return t;
    t.host = url.substr(scheme.size(), colon - scheme.size());
    t.port = std::atoi(url.substr(colon + 1, slash - colon - 1).c_str());
    t.path = slash == std::string::npos ? "/" : url.substr(slash);
    return t;
}

inline std::string dechunk(const std::string &chunked) {
    std::string out;
    std::size_t i = 0;
    while (i < chunked.size()) {
        std::size_t eol = chunked.find("\r\n", i);
        if (eol == std::string::npos) break;
        std::size_t size = std::strtoul(chunked.substr(i, eol - i).c_str(), nullptr, 16);
        if (size == 0) break;
        out += chunked.substr(eol + 2, size);
        i = eol + 2 + size + 2;
    }
    return out;
}

/// One request (Connection: close), the whole answer read, 30 s at most per read.
inline Answer request(const std::string &method, const std::string &url, const std::string &body = "",
                      const std::vector<std::pair<std::string, std::string>> &headers = {}) {
    Answer answer;
    Target t = parse(url);
    if (t.port == 0) return answer;
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return answer;
    timeval tv{30, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(t.port));
    ::inet_pton(AF_INET, t.host.c_str(), &addr.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return answer;
    }
    std::string req = method + " " + t.path + " HTTP/1.1\r\nHost: " + t.host + ":" + std::to_string(t.port) +
                      "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    for (const auto &h : headers) req += h.first + ": " + h.second + "\r\n";
    req += "\r\n" + body;
    std::size_t sent = 0;
    while (sent < req.size()) {
        ssize_t n = ::send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
    }
    std::string raw;
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) raw.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    std::size_t end = raw.find("\r\n\r\n");
    if (raw.size() < 12 || end == std::string::npos) return answer;
    answer.status = std::atoi(raw.substr(9, 3).c_str());
    answer.head = raw.substr(0, end);
    answer.body = raw.substr(end + 4);
    std::string lower;
    for (char c : answer.head) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("transfer-encoding: chunked") != std::string::npos) answer.body = dechunk(answer.body);
    return answer;
}

/// A header's value (case-insensitive name), "" if absent.
inline std::string header(const Answer &a, const std::string &name) {
    std::size_t i = 0;
    while ((i = a.head.find("\r\n", i)) != std::string::npos) {
        i += 2;
        std::size_t colon = a.head.find(':', i);
        if (colon == std::string::npos) break;
        std::string key = a.head.substr(i, colon - i);
        bool same = key.size() == name.size();
        for (std::size_t k = 0; same && k < key.size(); k++)
            same = std::tolower(static_cast<unsigned char>(key[k])) == std::tolower(static_cast<unsigned char>(name[k]));
        if (same) {
            std::size_t v = a.head.find_first_not_of(' ', colon + 1);
            std::size_t e = a.head.find("\r\n", v);
            return a.head.substr(v, e == std::string::npos ? std::string::npos : e - v);
        }
    }
    return "";
}

/// The raw text of a JSON string member `"key":"..."` (escapes kept as
/// they are, so it can be put back in JSON unchanged); "" if absent.
inline std::string json_string(const std::string &json, const std::string &key) {
    std::string needle = "\"" + key + "\":\"";
    std::size_t i = json.find(needle);
    if (i == std::string::npos) return "";
    i += needle.size();
    std::size_t j = i;
    while (j < json.size() && json[j] != '"') j += json[j] == '\\' ? 2 : 1;
    return json.substr(i, j - i);
}

}  // namespace http

#endif
