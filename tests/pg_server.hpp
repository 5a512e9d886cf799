// PgServer: a throw-away PostgreSQL server for tests — initdb + pg_ctl in a scratch directory,
// on a free TCP port of 127.0.0.1 with its unix socket in the same directory, password
// (scram) authentication for TCP, stopped and removed afterwards. As root it runs as `nobody`
// (postgres refuses root). unavailableReason() says why no server can be started (no binaries).
// stop(), start() and restart() take it away and bring it back on the same port, data kept, to
// test what clients do when their connection drops.
#pragma once

#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "ResultStore.hpp"

namespace gemmtune::test {

class PgServer {
 public:
  static constexpr const char* kUser = "gemmtune";
  static constexpr const char* kPassword = "pw-Secret-4711";

  // The newest /usr/lib/postgresql/<version>/bin holding initdb and pg_ctl; empty when none.
  static std::filesystem::path binDir() {
    std::filesystem::path best;
    int bestVersion = -1;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      auto bin = e.path() / "bin";
      int version = std::atoi(e.path().filename().c_str());
      if (std::filesystem::exists(bin / "initdb") && std::filesystem::exists(bin / "pg_ctl") && version > bestVersion)
        best = bin, bestVersion = version;
    }
    return best;
  }

  static std::string unavailableReason() {
    if (!db::postgresqlSupported()) return "this build has no PostgreSQL support (libpq-dev was not found)";
    if (binDir().empty())
      return "PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/*/bin: "
             "install the `postgresql` package (scripts/build.sh does)";
    return {};
  }

  PgServer() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gemmtune-pg-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
    port_ = freePort();
    std::string runAs;
    if (::geteuid() == 0) {
      const passwd* nobody = ::getpwnam("nobody");
      if (!nobody) throw std::runtime_error("running as root and there is no user `nobody` to run postgres as");
      if (::chown(dir_.c_str(), nobody->pw_uid, nobody->pw_gid) != 0)
        throw std::runtime_error("cannot hand " + dir_.string() + " to nobody");
      runAs = "runuser -u nobody -- ";
    }
    run_ = runAs;
    std::ofstream(dir_ / "pwfile") << kPassword << '\n';
    if (!runAs.empty()) (void)::chown((dir_ / "pwfile").c_str(), ::getpwnam("nobody")->pw_uid, 0);
    auto bin = binDir();
    sh(fmt::format("{}{} -D {} -U {} --pwfile={} --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C "
                   "--no-sync >{}/initdb.log 2>&1",
                   run_, (bin / "initdb").string(), (dir_ / "data").string(), kUser, (dir_ / "pwfile").string(),
                   dir_.string()));
    start();
  }

  ~PgServer() {
    if (started_) {
      // A server that will not stop is left to the directory's removal: a destructor cannot fail.
      [[maybe_unused]] const int stopped = std::system(pgCtl("-m immediate -w stop").c_str());
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void start() {
    sh(pgCtl(fmt::format("-l {}/server.log -w -t 60 -o \"-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off "
                         "-c max_connections=50\" start",
                         dir_.string(), port_, dir_.string())));
    started_ = true;
  }
  // Fast shutdown: the server ends every session ("terminating connection due to administrator
  // command") and rolls back their open transactions.
  void stop() {
    sh(pgCtl("-m fast -w -t 60 stop"));
    started_ = false;
  }
  void restart() {
    stop();
    start();
  }
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  int port() const { return port_; }
  // A URL with the right password, for database `db`.
  std::string url(const std::string& db = "postgres", const std::string& password = kPassword) const {
    return fmt::format("postgresql://{}:{}@127.0.0.1:{}/{}", kUser, password, port_, db);
  }
  // A new, empty database; returns its URL.
  std::string createDatabase(const std::string& name) {
    sh(fmt::format("{}/psql -q -h {} -p {} -U {} -d postgres -c 'CREATE DATABASE {}' >/dev/null", binDir().string(),
                   dir_.string(), port_, kUser, name));
    return url(name);
  }
  // Runs SQL in `db` through psql (the unix socket, trusted).
  void psql(const std::string& db, const std::string& sql) const {
    std::ofstream(dir_ / "cmd.sql") << sql;
    sh(fmt::format("{}/psql -q -v ON_ERROR_STOP=1 -h {} -p {} -U {} -d {} -f {} >/dev/null", binDir().string(),
                   dir_.string(), port_, kUser, db, (dir_ / "cmd.sql").string()));
  }
  std::string query(const std::string& db, const std::string& sql) const {
    std::ofstream(dir_ / "cmd.sql") << sql;
    auto out = dir_ / "out.txt";
    sh(fmt::format("{}/psql -qAt -h {} -p {} -U {} -d {} -f {} >{}", binDir().string(), dir_.string(), port_,
                   kUser, db, (dir_ / "cmd.sql").string(), out.string()));
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }

  static int freePort() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
  }

 private:
  std::string pgCtl(const std::string& args) const {
    return fmt::format("{}{} -D {} {} >/dev/null 2>&1", run_, (binDir() / "pg_ctl").string(), (dir_ / "data").string(),
                       args);
  }
  void sh(const std::string& command) const {
    if (std::system(command.c_str()) != 0) {
      std::ifstream log(dir_ / "server.log");
      std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      throw std::runtime_error("failed: " + command + "\n" + text);
    }
  }

  std::filesystem::path dir_;
  std::string run_;
  int port_ = 0;
  bool started_ = false;
};

}  // namespace gemmtune::test
