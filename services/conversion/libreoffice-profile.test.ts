import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { LOCKED_DOWN_SETTINGS, writeProfileSettings } from "./libreoffice-profile.js";

const itemsOf = (xcu: string) => xcu.split("\n").filter((line) => line.startsWith("<item "));

test("a new profile gets registrymodifications.xcu with every locked-down setting", () => {
  const profile = mkdtempSync(join(tmpdir(), "lo-profile-"));
  try {
    writeProfileSettings(join(profile, "p"));
    const xcu = readFileSync(join(profile, "p", "user", "registrymodifications.xcu"), "utf8");
    assert.match(xcu, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<oor:items /);
    assert.match(xcu, /<\/oor:items>\n$/);
    assert.deepEqual(itemsOf(xcu), [
      '<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>',
      '<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="SecureURL" oor:op="fuse"><value/></prop></item>',
      '<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>',
      '<item oor:path="/org.openoffice.Office.Writer/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>0</value></prop></item>',
      '<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetProxyType" oor:op="fuse"><value>1</value></prop></item>',
      '<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetHTTPProxyName" oor:op="fuse"><value>127.0.0.1</value></prop></item>',
      '<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetHTTPProxyPort" oor:op="fuse"><value>1</value></prop></item>',
      '<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetHTTPSProxyName" oor:op="fuse"><value>127.0.0.1</value></prop></item>',
      '<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetHTTPSProxyPort" oor:op="fuse"><value>1</value></prop></item>',
      '<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetFTPProxyName" oor:op="fuse"><value>127.0.0.1</value></prop></item>',
      '<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetFTPProxyPort" oor:op="fuse"><value>1</value></prop></item>',
      '<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetNoProxy" oor:op="fuse"><value/></prop></item>',
    ]);
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
});

test("a profile LibreOffice wrote keeps its other settings; an earlier value of ours is replaced, and writing twice changes nothing", () => {
  const profile = mkdtempSync(join(tmpdir(), "lo-profile-"));
  try {
    mkdirSync(join(profile, "user"));
    const file = join(profile, "user", "registrymodifications.xcu");
    const own = '<item oor:path="/org.openoffice.Setup/Office"><prop oor:name="LastCompatibilityCheckID" oor:op="fuse"><value>7.4.7.2</value></prop></item>';
    const nested = '<item oor:path="/org.openoffice.Office.Common/Misc"><node oor:name="x" oor:op="replace"><prop oor:name="y" oor:op="fuse"><value>1</value></prop></node></item>';
    const stale = '<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>false</value></prop></item>';
    writeFileSync(file, `<?xml version="1.0" encoding="UTF-8"?>\n<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n${own}\n${stale}\n${nested}\n</oor:items>\n`);
    writeProfileSettings(profile);
    const once = readFileSync(file, "utf8");
    const items = itemsOf(once);
    assert.deepEqual(items.slice(0, 2), [own, nested]);
    assert.equal(items.length, 2 + LOCKED_DOWN_SETTINGS.length);
    assert.ok(!once.includes("<value>false</value>"));
    writeProfileSettings(profile);
    assert.equal(readFileSync(file, "utf8"), once);
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
});
