; Inno Setup 6 recipe for the Attention Explorer Windows installer.
;
; Build (on Windows, after `python packaging\build.py bundle` made dist\attention-explorer\):
;   iscc /DAppVersion=0.1.0 packaging\windows\attention-explorer.iss
; Output: dist\AttentionExplorer-<version>-setup.exe
;
; The CI workflow .github/workflows/installers.yml runs exactly this. Inno Setup 6 comes
; with the GitHub windows runners (C:\Program Files (x86)\Inno Setup 6\ISCC.exe); elsewhere
; install it from https://jrsoftware.org/isdl.php or `choco install innosetup`.
;
; Installs per machine into Program Files (or per user, without admin rights, when the
; teacher picks "Install for me only"), adds Start-menu and optional desktop shortcuts to
; the windowed AttentionExplorer.exe, and optionally puts the folder on PATH so that
; `attention-explorer export --out DIR` works in a terminal. Uninstall removes all of it;
; the user's settings (HKCU\Software\AttentionExplorer) are removed only if asked.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define AppName "Attention Explorer"
#define AppExe "AttentionExplorer.exe"
#define CliExe "attention-explorer.exe"
#define Root ".."
#define Bundle Root + "\..\dist\attention-explorer"

[Setup]
AppId={{6C1E4C7B-3E0A-4D55-9C1B-7A1E2F3D4B5C}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=Attention Explorer developers
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir={#Root}\..\dist
OutputBaseFilename=AttentionExplorer-{#AppVersion}-setup
SetupIconFile={#Root}\..\assets\icons\attention-explorer.ico
UninstallDisplayIcon={app}\{#AppExe}
Compression=lzma2/ultra64
SolidCompression=yes
LZMANumBlockThreads=4
WizardStyle=modern
ChangesEnvironment=yes

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"
Name: "addtopath"; Description: "Add attention-explorer to PATH (for export and selftest in a terminal)"; GroupDescription: "Command line:"; Flags: unchecked

[Files]
Source: "{#Bundle}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; Parameters: "gui"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Parameters: "gui"; Tasks: desktopicon
Name: "{autoprograms}\{#AppName} self-test"; Filename: "{cmd}"; Parameters: "/k ""{app}\{#CliExe}"" selftest"

[Registry]
; PATH entry for the console executable (per user, or per machine when installed for all users).
Root: HKA; Subkey: "{code:EnvKey}"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\{#AppExe}"; Parameters: "gui"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Anything written next to the program after installation (nothing, normally).
Type: filesandordirs; Name: "{app}\_internal"

[Code]
function EnvKey(Param: String): String;
begin
  if IsAdminInstallMode then
    Result := 'SYSTEM\CurrentControlSet\Control\Session Manager\Environment'
  else
    Result := 'Environment';
end;

function NeedsAddPath(Dir: String): Boolean;
var
  Paths: String;
  RootKey: Integer;
begin
  if IsAdminInstallMode then RootKey := HKEY_LOCAL_MACHINE else RootKey := HKEY_CURRENT_USER;
  if not RegQueryStringValue(RootKey, EnvKey(''), 'Path', Paths) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Paths) + ';') = 0;
end;

procedure RemoveFromPath(Dir: String);
var
  Paths: String;
  P: Integer;
  RootKey: Integer;
begin
  if IsAdminInstallMode then RootKey := HKEY_LOCAL_MACHINE else RootKey := HKEY_CURRENT_USER;
  if not RegQueryStringValue(RootKey, EnvKey(''), 'Path', Paths) then exit;
  P := Pos(';' + Uppercase(Dir), Uppercase(Paths));
  if P > 0 then
  begin
    Delete(Paths, P, Length(Dir) + 1);
    RegWriteExpandStringValue(RootKey, EnvKey(''), 'Path', Paths);
  end;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  if CurUninstallStep = usPostUninstall then
  begin
    RemoveFromPath(ExpandConstant('{app}'));
    if (not UninstallSilent) and (MsgBox('Also remove your Attention Explorer settings (window layout, recent files)?',
              mbConfirmation, MB_YESNO or MB_DEFBUTTON2) = IDYES) then
      RegDeleteKeyIncludingSubkeys(HKEY_CURRENT_USER, 'Software\AttentionExplorer');
  end;
end;
