#include "cli/exit_status.h"

#include <gtest/gtest.h>

namespace chokepoint::cli {
namespace {

TEST(ExitStatus, ToolCommandsSayZeroOneOrTwo) {
  EXPECT_EQ(exit_status(Status::Ok()), 0);
  EXPECT_EQ(exit_status(Status::Error(ErrorCode::kUsage, "bad flag")), 2);
  for (ErrorCode c : {ErrorCode::kFailed, ErrorCode::kInput, ErrorCode::kNotFound, ErrorCode::kIo,
                      ErrorCode::kUnsupported, ErrorCode::kCannotRun}) {
    EXPECT_EQ(exit_status(c), 1) << error_code_name(c);
  }
  EXPECT_EQ(exit_status(Status::Error("no code")), 1);
  EXPECT_EQ(exit_status(ErrorCode::kInternal), 70);
}

TEST(ExitStatus, RunFollowsTheWrapperConvention) {
  constexpr auto kW = ExitConvention::kWrapper;
  EXPECT_EQ(exit_status(Status::Error(ErrorCode::kCannotRun, "cannot run 'x': No such file"), kW), 127);
  EXPECT_EQ(exit_status(ErrorCode::kUsage, kW), 2);
  for (ErrorCode c : {ErrorCode::kFailed, ErrorCode::kInput, ErrorCode::kNotFound, ErrorCode::kIo,
                      ErrorCode::kUnsupported, ErrorCode::kInternal}) {
    EXPECT_EQ(exit_status(c, kW), 125) << error_code_name(c);
  }
}

TEST(ExitStatus, AnErrorNeverExitsZero) {
  // Status::Error with kOk would read as success: it becomes kFailed.
  const Status s = Status::Error(ErrorCode::kOk, "odd");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kFailed);
  EXPECT_EQ(exit_status(s), 1);
}

TEST(ExitStatus, CodesSurviveContext) {
  const Status s = Status::Error(ErrorCode::kCannotRun, "cannot run 'x'").prefixed("run: ");
  EXPECT_EQ(s.code(), ErrorCode::kCannotRun);
  EXPECT_EQ(s.message(), "run: cannot run 'x'");
  EXPECT_TRUE(Status::Ok().prefixed("x").ok());
}

}  // namespace
}  // namespace chokepoint::cli
